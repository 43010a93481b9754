"""A query's rows as an answer writes them: the result formats and the rows a driver hands over, encoded.

Owns GetData's result formats, JSON, CSV and NDJSON, and which one a request
asks for (``result_formats``), and ``EncodedRows``: a driver's batches made
chunks, with unique column names, the row count, the row limit and
``truncated`` (``result_rows``). The same for every driver.

May import: ``gateway.errors``, ``gateway.contract``, ``gateway.request`` (the
JSON media types). Sending the chunks over HTTP is ``gateway.web``'s
(``getdata_body``).
"""
