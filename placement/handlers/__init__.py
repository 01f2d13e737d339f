"""HTTP handlers, one module per resource; the routes are in placement/handler.py."""
