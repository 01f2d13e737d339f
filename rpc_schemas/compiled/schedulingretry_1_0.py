"""The check of SchedulingRetry-1.0.json, compiled by fastjsonschema 2.22.3.

Written by ``python -m rpc_schemas.write_schemas``; do not edit.
"""
# flake8: noqa
# ruff: noqa
SCHEMA_SHA256 = 'a6087697c54396aa97251cfd2ee74bd62789894f143c8e8abd8d35b47b1e6b8b'

VERSION = "2.22.3"
from decimal import Decimal
from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException


NoneType = type(None)

def validate(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (dict)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'SchedulingRetry 1.0', 'type': 'object', 'properties': {'num_attempts': {'type': 'integer', 'minimum': 0}, 'hosts': {'type': 'array', 'items': {'type': 'string'}}}, 'required': [], 'additionalProperties': False, 'description': 'Earlier attempts of this request: how many, on which hosts.'}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data__missing_keys = set([]) - data.keys()
        if data__missing_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must contain " + (str(sorted(data__missing_keys)) + " properties"), value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'SchedulingRetry 1.0', 'type': 'object', 'properties': {'num_attempts': {'type': 'integer', 'minimum': 0}, 'hosts': {'type': 'array', 'items': {'type': 'string'}}}, 'required': [], 'additionalProperties': False, 'description': 'Earlier attempts of this request: how many, on which hosts.'}, rule='required')
        data_keys = set(data.keys())
        if "num_attempts" in data_keys:
            data_keys.remove("num_attempts")
            data__numattempts = data["num_attempts"]
            if not isinstance(data__numattempts, (int)) and not (isinstance(data__numattempts, float) and data__numattempts.is_integer()) or isinstance(data__numattempts, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".num_attempts must be integer", value=data__numattempts, name="" + (name_prefix or "data") + ".num_attempts", definition={'type': 'integer', 'minimum': 0}, rule='type')
            if isinstance(data__numattempts, (int, float, Decimal)) and not isinstance(data__numattempts, bool):
                if data__numattempts < 0:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".num_attempts must be bigger than or equal to 0", value=data__numattempts, name="" + (name_prefix or "data") + ".num_attempts", definition={'type': 'integer', 'minimum': 0}, rule='minimum')
        if "hosts" in data_keys:
            data_keys.remove("hosts")
            data__hosts = data["hosts"]
            if not isinstance(data__hosts, (list, tuple)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".hosts must be array", value=data__hosts, name="" + (name_prefix or "data") + ".hosts", definition={'type': 'array', 'items': {'type': 'string'}}, rule='type')
            data__hosts_is_list = isinstance(data__hosts, (list, tuple))
            if data__hosts_is_list:
                data__hosts_len = len(data__hosts)
                for data__hosts_x, data__hosts_item in enumerate(data__hosts):
                    if not isinstance(data__hosts_item, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".hosts[{data__hosts_x}]".format(**locals()) + " must be string", value=data__hosts_item, name="" + (name_prefix or "data") + ".hosts[{data__hosts_x}]".format(**locals()) + "", definition={'type': 'string'}, rule='type')
        if data_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must not contain "+str(data_keys)+" properties", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'SchedulingRetry 1.0', 'type': 'object', 'properties': {'num_attempts': {'type': 'integer', 'minimum': 0}, 'hosts': {'type': 'array', 'items': {'type': 'string'}}}, 'required': [], 'additionalProperties': False, 'description': 'Earlier attempts of this request: how many, on which hosts.'}, rule='additionalProperties')
    return data