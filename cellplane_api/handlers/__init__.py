"""The compute API's handlers, one module per resource: plain functions ``handler(req) -> webob.Response``."""
