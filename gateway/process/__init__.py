"""The process: the ``dbgateway`` command, serving, workers and stopping.

Owns the command line (``cli``: ``serve``, ``config``, ``generate-key``,
``rotate-key``, ``registry copy``) and its commands (``config_command``,
``key_commands``, ``registry_commands``), the start-up banner (``banner``),
binding, serving and the bounded shutdown (``serving``), and the supervisor of
``workers`` > 1 (``workers``). ``python -m gateway`` and the ``dbgateway``
script both enter through ``cli.main``.

May import: every room of ``gateway`` but ``gateway.testing``. Nothing imports
it but ``gateway.__main__`` and the tests.
"""
