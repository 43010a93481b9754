"""The console: a page in the browser for token holders, served by the gateway at ``/console``.

It is a client of the gateway's own API and nothing more: the page and its
scripts call ``/Table/list``, ``/Table`` and ``/GetData`` with the token the
person pasted, exactly as curl would (docs/console.md). This package holds the
two routes that serve it (``routes``) and the files they serve (``static/``:
the HTML page, its stylesheet and its JavaScript modules, written here, with no
third-party code and no build step).
"""
