"""The project's scripts, a package so that they run as ``python -m scripts.<name>`` and tests import them plainly."""
