"""The check of ComputeNodeRecord-1.0.json, compiled by fastjsonschema 2.22.3.

Written by ``python -m rpc_schemas.write_schemas``; do not edit.
"""
# flake8: noqa
# ruff: noqa
SCHEMA_SHA256 = '69fd882e55b09bb4281bb36fa67ba2a37bdff1c444af720e6944452be436d7b3'

VERSION = "2.22.3"
from decimal import Decimal
from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException


NoneType = type(None)

def validate(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (dict)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'ComputeNodeRecord 1.0', 'type': 'object', 'properties': {'uuid': {'type': 'string', 'minLength': 36, 'maxLength': 36}, 'host': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'nodename': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'vcpus': {'type': 'integer', 'minimum': 0}, 'memory_mb': {'type': 'integer', 'minimum': 0}, 'local_gb': {'type': 'integer', 'minimum': 0}, 'cpu_allocation_ratio': {'type': 'number', 'exclusiveMinimum': 0}, 'ram_allocation_ratio': {'type': 'number', 'exclusiveMinimum': 0}, 'disk_allocation_ratio': {'type': 'number', 'exclusiveMinimum': 0}, 'availability_zone': {'maxLength': 255, 'type': ['string', 'null']}, 'stats': {'type': 'object', 'additionalProperties': {}}}, 'required': ['uuid', 'host', 'nodename', 'vcpus', 'memory_mb', 'local_gb'], 'additionalProperties': False, 'description': 'A compute node: its identity (also its Placement resource provider), its capacity and its availability zone.'}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data__missing_keys = set(['uuid', 'host', 'nodename', 'vcpus', 'memory_mb', 'local_gb']) - data.keys()
        if data__missing_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must contain " + (str(sorted(data__missing_keys)) + " properties"), value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'ComputeNodeRecord 1.0', 'type': 'object', 'properties': {'uuid': {'type': 'string', 'minLength': 36, 'maxLength': 36}, 'host': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'nodename': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'vcpus': {'type': 'integer', 'minimum': 0}, 'memory_mb': {'type': 'integer', 'minimum': 0}, 'local_gb': {'type': 'integer', 'minimum': 0}, 'cpu_allocation_ratio': {'type': 'number', 'exclusiveMinimum': 0}, 'ram_allocation_ratio': {'type': 'number', 'exclusiveMinimum': 0}, 'disk_allocation_ratio': {'type': 'number', 'exclusiveMinimum': 0}, 'availability_zone': {'maxLength': 255, 'type': ['string', 'null']}, 'stats': {'type': 'object', 'additionalProperties': {}}}, 'required': ['uuid', 'host', 'nodename', 'vcpus', 'memory_mb', 'local_gb'], 'additionalProperties': False, 'description': 'A compute node: its identity (also its Placement resource provider), its capacity and its availability zone.'}, rule='required')
        data_keys = set(data.keys())
        if "uuid" in data_keys:
            data_keys.remove("uuid")
            data__uuid = data["uuid"]
            if not isinstance(data__uuid, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".uuid must be string", value=data__uuid, name="" + (name_prefix or "data") + ".uuid", definition={'type': 'string', 'minLength': 36, 'maxLength': 36}, rule='type')
            if isinstance(data__uuid, str):
                data__uuid_len = len(data__uuid)
                if data__uuid_len < 36:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".uuid must be longer than or equal to 36 characters", value=data__uuid, name="" + (name_prefix or "data") + ".uuid", definition={'type': 'string', 'minLength': 36, 'maxLength': 36}, rule='minLength')
                if data__uuid_len > 36:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".uuid must be shorter than or equal to 36 characters", value=data__uuid, name="" + (name_prefix or "data") + ".uuid", definition={'type': 'string', 'minLength': 36, 'maxLength': 36}, rule='maxLength')
        if "host" in data_keys:
            data_keys.remove("host")
            data__host = data["host"]
            if not isinstance(data__host, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".host must be string", value=data__host, name="" + (name_prefix or "data") + ".host", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='type')
            if isinstance(data__host, str):
                data__host_len = len(data__host)
                if data__host_len < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".host must be longer than or equal to 1 characters", value=data__host, name="" + (name_prefix or "data") + ".host", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='minLength')
                if data__host_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".host must be shorter than or equal to 255 characters", value=data__host, name="" + (name_prefix or "data") + ".host", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='maxLength')
        if "nodename" in data_keys:
            data_keys.remove("nodename")
            data__nodename = data["nodename"]
            if not isinstance(data__nodename, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".nodename must be string", value=data__nodename, name="" + (name_prefix or "data") + ".nodename", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='type')
            if isinstance(data__nodename, str):
                data__nodename_len = len(data__nodename)
                if data__nodename_len < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".nodename must be longer than or equal to 1 characters", value=data__nodename, name="" + (name_prefix or "data") + ".nodename", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='minLength')
                if data__nodename_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".nodename must be shorter than or equal to 255 characters", value=data__nodename, name="" + (name_prefix or "data") + ".nodename", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='maxLength')
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
        if "local_gb" in data_keys:
            data_keys.remove("local_gb")
            data__localgb = data["local_gb"]
            if not isinstance(data__localgb, (int)) and not (isinstance(data__localgb, float) and data__localgb.is_integer()) or isinstance(data__localgb, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".local_gb must be integer", value=data__localgb, name="" + (name_prefix or "data") + ".local_gb", definition={'type': 'integer', 'minimum': 0}, rule='type')
            if isinstance(data__localgb, (int, float, Decimal)) and not isinstance(data__localgb, bool):
                if data__localgb < 0:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".local_gb must be bigger than or equal to 0", value=data__localgb, name="" + (name_prefix or "data") + ".local_gb", definition={'type': 'integer', 'minimum': 0}, rule='minimum')
        if "cpu_allocation_ratio" in data_keys:
            data_keys.remove("cpu_allocation_ratio")
            data__cpuallocationratio = data["cpu_allocation_ratio"]
            if not isinstance(data__cpuallocationratio, (int, float, Decimal)) or isinstance(data__cpuallocationratio, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".cpu_allocation_ratio must be number", value=data__cpuallocationratio, name="" + (name_prefix or "data") + ".cpu_allocation_ratio", definition={'type': 'number', 'exclusiveMinimum': 0}, rule='type')
            if isinstance(data__cpuallocationratio, (int, float, Decimal)) and not isinstance(data__cpuallocationratio, bool):
                if data__cpuallocationratio <= 0:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".cpu_allocation_ratio must be bigger than 0", value=data__cpuallocationratio, name="" + (name_prefix or "data") + ".cpu_allocation_ratio", definition={'type': 'number', 'exclusiveMinimum': 0}, rule='exclusiveMinimum')
        if "ram_allocation_ratio" in data_keys:
            data_keys.remove("ram_allocation_ratio")
            data__ramallocationratio = data["ram_allocation_ratio"]
            if not isinstance(data__ramallocationratio, (int, float, Decimal)) or isinstance(data__ramallocationratio, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".ram_allocation_ratio must be number", value=data__ramallocationratio, name="" + (name_prefix or "data") + ".ram_allocation_ratio", definition={'type': 'number', 'exclusiveMinimum': 0}, rule='type')
            if isinstance(data__ramallocationratio, (int, float, Decimal)) and not isinstance(data__ramallocationratio, bool):
                if data__ramallocationratio <= 0:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".ram_allocation_ratio must be bigger than 0", value=data__ramallocationratio, name="" + (name_prefix or "data") + ".ram_allocation_ratio", definition={'type': 'number', 'exclusiveMinimum': 0}, rule='exclusiveMinimum')
        if "disk_allocation_ratio" in data_keys:
            data_keys.remove("disk_allocation_ratio")
            data__diskallocationratio = data["disk_allocation_ratio"]
            if not isinstance(data__diskallocationratio, (int, float, Decimal)) or isinstance(data__diskallocationratio, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".disk_allocation_ratio must be number", value=data__diskallocationratio, name="" + (name_prefix or "data") + ".disk_allocation_ratio", definition={'type': 'number', 'exclusiveMinimum': 0}, rule='type')
            if isinstance(data__diskallocationratio, (int, float, Decimal)) and not isinstance(data__diskallocationratio, bool):
                if data__diskallocationratio <= 0:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".disk_allocation_ratio must be bigger than 0", value=data__diskallocationratio, name="" + (name_prefix or "data") + ".disk_allocation_ratio", definition={'type': 'number', 'exclusiveMinimum': 0}, rule='exclusiveMinimum')
        if "availability_zone" in data_keys:
            data_keys.remove("availability_zone")
            data__availabilityzone = data["availability_zone"]
            if not isinstance(data__availabilityzone, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".availability_zone must be string or null", value=data__availabilityzone, name="" + (name_prefix or "data") + ".availability_zone", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='type')
            if isinstance(data__availabilityzone, str):
                data__availabilityzone_len = len(data__availabilityzone)
                if data__availabilityzone_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".availability_zone must be shorter than or equal to 255 characters", value=data__availabilityzone, name="" + (name_prefix or "data") + ".availability_zone", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='maxLength')
        if "stats" in data_keys:
            data_keys.remove("stats")
            data__stats = data["stats"]
            if not isinstance(data__stats, (dict)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".stats must be object", value=data__stats, name="" + (name_prefix or "data") + ".stats", definition={'type': 'object', 'additionalProperties': {}}, rule='type')
            data__stats_is_dict = isinstance(data__stats, dict)
            if data__stats_is_dict:
                data__stats_keys = set(data__stats.keys())
        if data_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must not contain "+str(data_keys)+" properties", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'ComputeNodeRecord 1.0', 'type': 'object', 'properties': {'uuid': {'type': 'string', 'minLength': 36, 'maxLength': 36}, 'host': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'nodename': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'vcpus': {'type': 'integer', 'minimum': 0}, 'memory_mb': {'type': 'integer', 'minimum': 0}, 'local_gb': {'type': 'integer', 'minimum': 0}, 'cpu_allocation_ratio': {'type': 'number', 'exclusiveMinimum': 0}, 'ram_allocation_ratio': {'type': 'number', 'exclusiveMinimum': 0}, 'disk_allocation_ratio': {'type': 'number', 'exclusiveMinimum': 0}, 'availability_zone': {'maxLength': 255, 'type': ['string', 'null']}, 'stats': {'type': 'object', 'additionalProperties': {}}}, 'required': ['uuid', 'host', 'nodename', 'vcpus', 'memory_mb', 'local_gb'], 'additionalProperties': False, 'description': 'A compute node: its identity (also its Placement resource provider), its capacity and its availability zone.'}, rule='additionalProperties')
    return data