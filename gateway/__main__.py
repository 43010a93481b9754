"""``python -m gateway`` is the ``dbgateway`` command."""

from __future__ import annotations

import sys

from gateway.process.cli import main

sys.exit(main())
