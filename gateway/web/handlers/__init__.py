"""Thin request handlers, one module per resource; they raise ``gateway.errors`` and never catch them."""
