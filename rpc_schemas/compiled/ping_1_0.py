"""The check of Ping-1.0.json, compiled by fastjsonschema 2.22.3.

Written by ``python -m rpc_schemas.write_schemas``; do not edit.
"""
# flake8: noqa
# ruff: noqa
SCHEMA_SHA256 = '69c78725eca0365cc5f3fa038fa046a04c1b704c0494b5702708c925487d0dfd'

VERSION = "2.22.3"
from decimal import Decimal
from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException


NoneType = type(None)

def validate(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (dict)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'Ping 1.0', 'type': 'object', 'properties': {'message': {'type': 'string', 'maxLength': 1024}, 'hold_seconds': {'minimum': 0, 'maximum': 60.0, 'type': ['number', 'null']}}, 'required': [], 'additionalProperties': False, 'description': 'Diagnostic echo request.'}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data__missing_keys = set([]) - data.keys()
        if data__missing_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must contain " + (str(sorted(data__missing_keys)) + " properties"), value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'Ping 1.0', 'type': 'object', 'properties': {'message': {'type': 'string', 'maxLength': 1024}, 'hold_seconds': {'minimum': 0, 'maximum': 60.0, 'type': ['number', 'null']}}, 'required': [], 'additionalProperties': False, 'description': 'Diagnostic echo request.'}, rule='required')
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
        if "hold_seconds" in data_keys:
            data_keys.remove("hold_seconds")
            data__holdseconds = data["hold_seconds"]
            if not isinstance(data__holdseconds, (int, float, Decimal, NoneType)) or isinstance(data__holdseconds, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".hold_seconds must be number or null", value=data__holdseconds, name="" + (name_prefix or "data") + ".hold_seconds", definition={'minimum': 0, 'maximum': 60.0, 'type': ['number', 'null']}, rule='type')
            if isinstance(data__holdseconds, (int, float, Decimal)) and not isinstance(data__holdseconds, bool):
                if data__holdseconds < 0:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".hold_seconds must be bigger than or equal to 0", value=data__holdseconds, name="" + (name_prefix or "data") + ".hold_seconds", definition={'minimum': 0, 'maximum': 60.0, 'type': ['number', 'null']}, rule='minimum')
                if data__holdseconds > 60.0:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".hold_seconds must be smaller than or equal to 60.0", value=data__holdseconds, name="" + (name_prefix or "data") + ".hold_seconds", definition={'minimum': 0, 'maximum': 60.0, 'type': ['number', 'null']}, rule='maximum')
        if data_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must not contain "+str(data_keys)+" properties", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'Ping 1.0', 'type': 'object', 'properties': {'message': {'type': 'string', 'maxLength': 1024}, 'hold_seconds': {'minimum': 0, 'maximum': 60.0, 'type': ['number', 'null']}}, 'required': [], 'additionalProperties': False, 'description': 'Diagnostic echo request.'}, rule='additionalProperties')
    return data