"""The check of Flavor-1.0.json, compiled by fastjsonschema 2.22.3.

Written by ``python -m rpc_schemas.write_schemas``; do not edit.
"""
# flake8: noqa
# ruff: noqa
SCHEMA_SHA256 = 'e5b00d86e8b065f61328ba10521bc0447783745aa81b76a74250588246711504'

VERSION = "2.22.3"
from decimal import Decimal
from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException


NoneType = type(None)

def validate(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (dict)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'Flavor 1.0', 'type': 'object', 'properties': {'name': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'vcpus': {'type': 'integer', 'minimum': 0}, 'memory_mb': {'type': 'integer', 'minimum': 0}, 'root_gb': {'type': 'integer', 'minimum': 0}, 'flavorid': {'maxLength': 255, 'type': ['string', 'null']}, 'extra_specs': {'type': 'object', 'additionalProperties': {'type': 'string'}}}, 'required': ['name', 'vcpus', 'memory_mb'], 'additionalProperties': False, 'description': 'Size of an instance and the extra specs that steer its scheduling.'}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data__missing_keys = set(['name', 'vcpus', 'memory_mb']) - data.keys()
        if data__missing_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must contain " + (str(sorted(data__missing_keys)) + " properties"), value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'Flavor 1.0', 'type': 'object', 'properties': {'name': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'vcpus': {'type': 'integer', 'minimum': 0}, 'memory_mb': {'type': 'integer', 'minimum': 0}, 'root_gb': {'type': 'integer', 'minimum': 0}, 'flavorid': {'maxLength': 255, 'type': ['string', 'null']}, 'extra_specs': {'type': 'object', 'additionalProperties': {'type': 'string'}}}, 'required': ['name', 'vcpus', 'memory_mb'], 'additionalProperties': False, 'description': 'Size of an instance and the extra specs that steer its scheduling.'}, rule='required')
        data_keys = set(data.keys())
        if "name" in data_keys:
            data_keys.remove("name")
            data__name = data["name"]
            if not isinstance(data__name, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".name must be string", value=data__name, name="" + (name_prefix or "data") + ".name", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='type')
            if isinstance(data__name, str):
                data__name_len = len(data__name)
                if data__name_len < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".name must be longer than or equal to 1 characters", value=data__name, name="" + (name_prefix or "data") + ".name", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='minLength')
                if data__name_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".name must be shorter than or equal to 255 characters", value=data__name, name="" + (name_prefix or "data") + ".name", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='maxLength')
        if "vcpus" in data_keys:
            data_keys.remove("vcpus")
            data__vcpus = data["vcpus"]
            if not isinstance(data__vcpus, (int)) and not (isinstance(data__vcpus, float) and data__vcpus.is_integer()) or isinstance(data__vcpus, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".vcpus must be integer", value=data__vcpus, name="" + (name_prefix or "data") + ".vcpus", definition={'type': 'integer', 'minimum': 0}, rule='type')
            if isinstance(data__vcpus, (int, float, Decimal)) and not isinstance(data__vcpus, bool):
                if data__vcpus < 0:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".vcpus must be bigger than or equal to 0", value=data__vcpus, name="" + (name_prefix or "data") + ".vcpus", definition={'type': 'integer', 'minimum': 0}, rule='minimum')
        if "memory_mb" in data_keys:
            data_keys.remove("memory_mb")
            data__memorymb = data["memory_mb"]
            if not isinstance(data__memorymb, (int)) and not (isinstance(data__memorymb, float) and data__memorymb.is_integer()) or isinstance(data__memorymb, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".memory_mb must be integer", value=data__memorymb, name="" + (name_prefix or "data") + ".memory_mb", definition={'type': 'integer', 'minimum': 0}, rule='type')
            if isinstance(data__memorymb, (int, float, Decimal)) and not isinstance(data__memorymb, bool):
                if data__memorymb < 0:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".memory_mb must be bigger than or equal to 0", value=data__memorymb, name="" + (name_prefix or "data") + ".memory_mb", definition={'type': 'integer', 'minimum': 0}, rule='minimum')
        if "root_gb" in data_keys:
            data_keys.remove("root_gb")
            data__rootgb = data["root_gb"]
            if not isinstance(data__rootgb, (int)) and not (isinstance(data__rootgb, float) and data__rootgb.is_integer()) or isinstance(data__rootgb, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".root_gb must be integer", value=data__rootgb, name="" + (name_prefix or "data") + ".root_gb", definition={'type': 'integer', 'minimum': 0}, rule='type')
            if isinstance(data__rootgb, (int, float, Decimal)) and not isinstance(data__rootgb, bool):
                if data__rootgb < 0:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".root_gb must be bigger than or equal to 0", value=data__rootgb, name="" + (name_prefix or "data") + ".root_gb", definition={'type': 'integer', 'minimum': 0}, rule='minimum')
        if "flavorid" in data_keys:
            data_keys.remove("flavorid")
            data__flavorid = data["flavorid"]
            if not isinstance(data__flavorid, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".flavorid must be string or null", value=data__flavorid, name="" + (name_prefix or "data") + ".flavorid", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='type')
            if isinstance(data__flavorid, str):
                data__flavorid_len = len(data__flavorid)
                if data__flavorid_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".flavorid must be shorter than or equal to 255 characters", value=data__flavorid, name="" + (name_prefix or "data") + ".flavorid", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='maxLength')
        if "extra_specs" in data_keys:
            data_keys.remove("extra_specs")
            data__extraspecs = data["extra_specs"]
            if not isinstance(data__extraspecs, (dict)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".extra_specs must be object", value=data__extraspecs, name="" + (name_prefix or "data") + ".extra_specs", definition={'type': 'object', 'additionalProperties': {'type': 'string'}}, rule='type')
            data__extraspecs_is_dict = isinstance(data__extraspecs, dict)
            if data__extraspecs_is_dict:
                data__extraspecs_keys = set(data__extraspecs.keys())
                for data__extraspecs_key in data__extraspecs_keys:
                    if data__extraspecs_key not in []:
                        data__extraspecs_value = data__extraspecs.get(data__extraspecs_key)
                        if not isinstance(data__extraspecs_value, (str)):
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".extra_specs.{data__extraspecs_key}".format(**locals()) + " must be string", value=data__extraspecs_value, name="" + (name_prefix or "data") + ".extra_specs.{data__extraspecs_key}".format(**locals()) + "", definition={'type': 'string'}, rule='type')
        if data_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must not contain "+str(data_keys)+" properties", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'Flavor 1.0', 'type': 'object', 'properties': {'name': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'vcpus': {'type': 'integer', 'minimum': 0}, 'memory_mb': {'type': 'integer', 'minimum': 0}, 'root_gb': {'type': 'integer', 'minimum': 0}, 'flavorid': {'maxLength': 255, 'type': ['string', 'null']}, 'extra_specs': {'type': 'object', 'additionalProperties': {'type': 'string'}}}, 'required': ['name', 'vcpus', 'memory_mb'], 'additionalProperties': False, 'description': 'Size of an instance and the extra specs that steer its scheduling.'}, rule='additionalProperties')
    return data