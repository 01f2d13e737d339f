"""The check of Pong-1.0.json, compiled by fastjsonschema 2.22.3.

Written by ``python -m rpc_schemas.write_schemas``; do not edit.
"""
# flake8: noqa
# ruff: noqa
SCHEMA_SHA256 = 'af54e7e6cfe312f36b668b2326079ce146863db789ff9321be06b448601c2f4a'

VERSION = "2.22.3"
from decimal import Decimal
from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException


NoneType = type(None)

def validate(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (dict)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'Pong 1.0', 'type': 'object', 'properties': {'message': {'type': 'string', 'maxLength': 1024}, 'host': {'type': 'string', 'maxLength': 255}, 'binary': {'type': 'string', 'maxLength': 255}, 'held_seconds': {'type': 'number', 'minimum': 0}}, 'required': ['message', 'host', 'binary'], 'additionalProperties': False, 'description': 'Diagnostic echo answer: who answered, after how long a hold.'}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data__missing_keys = set(['message', 'host', 'binary']) - data.keys()
        if data__missing_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must contain " + (str(sorted(data__missing_keys)) + " properties"), value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'Pong 1.0', 'type': 'object', 'properties': {'message': {'type': 'string', 'maxLength': 1024}, 'host': {'type': 'string', 'maxLength': 255}, 'binary': {'type': 'string', 'maxLength': 255}, 'held_seconds': {'type': 'number', 'minimum': 0}}, 'required': ['message', 'host', 'binary'], 'additionalProperties': False, 'description': 'Diagnostic echo answer: who answered, after how long a hold.'}, rule='required')
        data_keys = set(data.keys())
        if "message" in data_keys:
            data_keys.remove("message")
            data__message = data["message"]
            if not isinstance(data__message, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".message must be string", value=data__message, name="" + (name_prefix or "data") + ".message", definition={'type': 'string', 'maxLength': 1024}, rule='type')
            if isinstance(data__message, str):
                data__message_len = len(data__message)
                if data__message_len > 1024:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".message must be shorter than or equal to 1024 characters", value=data__message, name="" + (name_prefix or "data") + ".message", definition={'type': 'string', 'maxLength': 1024}, rule='maxLength')
        if "host" in data_keys:
            data_keys.remove("host")
            data__host = data["host"]
            if not isinstance(data__host, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".host must be string", value=data__host, name="" + (name_prefix or "data") + ".host", definition={'type': 'string', 'maxLength': 255}, rule='type')
            if isinstance(data__host, str):
                data__host_len = len(data__host)
                if data__host_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".host must be shorter than or equal to 255 characters", value=data__host, name="" + (name_prefix or "data") + ".host", definition={'type': 'string', 'maxLength': 255}, rule='maxLength')
        if "binary" in data_keys:
            data_keys.remove("binary")
            data__binary = data["binary"]
            if not isinstance(data__binary, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".binary must be string", value=data__binary, name="" + (name_prefix or "data") + ".binary", definition={'type': 'string', 'maxLength': 255}, rule='type')
            if isinstance(data__binary, str):
                data__binary_len = len(data__binary)
                if data__binary_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".binary must be shorter than or equal to 255 characters", value=data__binary, name="" + (name_prefix or "data") + ".binary", definition={'type': 'string', 'maxLength': 255}, rule='maxLength')
        if "held_seconds" in data_keys:
            data_keys.remove("held_seconds")
            data__heldseconds = data["held_seconds"]
            if not isinstance(data__heldseconds, (int, float, Decimal)) or isinstance(data__heldseconds, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".held_seconds must be number", value=data__heldseconds, name="" + (name_prefix or "data") + ".held_seconds", definition={'type': 'number', 'minimum': 0}, rule='type')
            if isinstance(data__heldseconds, (int, float, Decimal)) and not isinstance(data__heldseconds, bool):
                if data__heldseconds < 0:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".held_seconds must be bigger than or equal to 0", value=data__heldseconds, name="" + (name_prefix or "data") + ".held_seconds", definition={'type': 'number', 'minimum': 0}, rule='minimum')
        if data_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must not contain "+str(data_keys)+" properties", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'Pong 1.0', 'type': 'object', 'properties': {'message': {'type': 'string', 'maxLength': 1024}, 'host': {'type': 'string', 'maxLength': 255}, 'binary': {'type': 'string', 'maxLength': 255}, 'held_seconds': {'type': 'number', 'minimum': 0}}, 'required': ['message', 'host', 'binary'], 'additionalProperties': False, 'description': 'Diagnostic echo answer: who answered, after how long a hold.'}, rule='additionalProperties')
    return data