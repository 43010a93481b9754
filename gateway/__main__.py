"""``python -m gateway`` is the ``dbgateway`` command."""

from __future__ import annotations

import sys

from gateway.cli import main

sys.exit(main())
