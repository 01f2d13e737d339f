"""The check of RequestedDestination-1.0.json, compiled by fastjsonschema 2.22.3.

Written by ``python -m rpc_schemas.write_schemas``; do not edit.
"""
# flake8: noqa
# ruff: noqa
SCHEMA_SHA256 = '60156afa739299272dd3e49c4d58b022edb3b80c40739753ae49fb1f9eca3277'

VERSION = "2.22.3"
from decimal import Decimal
from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException


NoneType = type(None)

def validate(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (dict)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'RequestedDestination 1.0', 'type': 'object', 'properties': {'host': {'maxLength': 255, 'type': ['string', 'null']}, 'nodename': {'maxLength': 255, 'type': ['string', 'null']}, 'cell_uuid': {'maxLength': 36, 'type': ['string', 'null']}, 'aggregates': {'type': 'array', 'items': {'type': 'string'}}}, 'required': [], 'additionalProperties': False, 'description': 'Where the caller wants the instance: a host, a node, a cell and/or Placement aggregates (each set field narrows).'}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data__missing_keys = set([]) - data.keys()
        if data__missing_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must contain " + (str(sorted(data__missing_keys)) + " properties"), value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'RequestedDestination 1.0', 'type': 'object', 'properties': {'host': {'maxLength': 255, 'type': ['string', 'null']}, 'nodename': {'maxLength': 255, 'type': ['string', 'null']}, 'cell_uuid': {'maxLength': 36, 'type': ['string', 'null']}, 'aggregates': {'type': 'array', 'items': {'type': 'string'}}}, 'required': [], 'additionalProperties': False, 'description': 'Where the caller wants the instance: a host, a node, a cell and/or Placement aggregates (each set field narrows).'}, rule='required')
        data_keys = set(data.keys())
        if "host" in data_keys:
            data_keys.remove("host")
            data__host = data["host"]
            if not isinstance(data__host, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".host must be string or null", value=data__host, name="" + (name_prefix or "data") + ".host", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='type')
            if isinstance(data__host, str):
                data__host_len = len(data__host)
                if data__host_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".host must be shorter than or equal to 255 characters", value=data__host, name="" + (name_prefix or "data") + ".host", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='maxLength')
        if "nodename" in data_keys:
            data_keys.remove("nodename")
            data__nodename = data["nodename"]
            if not isinstance(data__nodename, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".nodename must be string or null", value=data__nodename, name="" + (name_prefix or "data") + ".nodename", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='type')
            if isinstance(data__nodename, str):
                data__nodename_len = len(data__nodename)
                if data__nodename_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".nodename must be shorter than or equal to 255 characters", value=data__nodename, name="" + (name_prefix or "data") + ".nodename", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='maxLength')
        if "cell_uuid" in data_keys:
            data_keys.remove("cell_uuid")
            data__celluuid = data["cell_uuid"]
            if not isinstance(data__celluuid, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".cell_uuid must be string or null", value=data__celluuid, name="" + (name_prefix or "data") + ".cell_uuid", definition={'maxLength': 36, 'type': ['string', 'null']}, rule='type')
            if isinstance(data__celluuid, str):
                data__celluuid_len = len(data__celluuid)
                if data__celluuid_len > 36:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".cell_uuid must be shorter than or equal to 36 characters", value=data__celluuid, name="" + (name_prefix or "data") + ".cell_uuid", definition={'maxLength': 36, 'type': ['string', 'null']}, rule='maxLength')
        if "aggregates" in data_keys:
            data_keys.remove("aggregates")
            data__aggregates = data["aggregates"]
            if not isinstance(data__aggregates, (list, tuple)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".aggregates must be array", value=data__aggregates, name="" + (name_prefix or "data") + ".aggregates", definition={'type': 'array', 'items': {'type': 'string'}}, rule='type')
            data__aggregates_is_list = isinstance(data__aggregates, (list, tuple))
            if data__aggregates_is_list:
                data__aggregates_len = len(data__aggregates)
                for data__aggregates_x, data__aggregates_item in enumerate(data__aggregates):
                    if not isinstance(data__aggregates_item, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".aggregates[{data__aggregates_x}]".format(**locals()) + " must be string", value=data__aggregates_item, name="" + (name_prefix or "data") + ".aggregates[{data__aggregates_x}]".format(**locals()) + "", definition={'type': 'string'}, rule='type')
        if data_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must not contain "+str(data_keys)+" properties", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'RequestedDestination 1.0', 'type': 'object', 'properties': {'host': {'maxLength': 255, 'type': ['string', 'null']}, 'nodename': {'maxLength': 255, 'type': ['string', 'null']}, 'cell_uuid': {'maxLength': 36, 'type': ['string', 'null']}, 'aggregates': {'type': 'array', 'items': {'type': 'string'}}}, 'required': [], 'additionalProperties': False, 'description': 'Where the caller wants the instance: a host, a node, a cell and/or Placement aggregates (each set field narrows).'}, rule='additionalProperties')
    return data