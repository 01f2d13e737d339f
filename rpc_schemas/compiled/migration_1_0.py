"""The check of Migration-1.0.json, compiled by fastjsonschema 2.22.3.

Written by ``python -m rpc_schemas.write_schemas``; do not edit.
"""
# flake8: noqa
# ruff: noqa
SCHEMA_SHA256 = '7304b18e22bf31e0f9a5eafea64516e47b59d6b5ea5d16ee173cdd0e1ce1f3df'

VERSION = "2.22.3"
from decimal import Decimal
import re
from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException


REGEX_PATTERNS = {
    '^[0-9]+\\.[0-9]+$': re.compile('^[0-9]+\\.[0-9]+\\Z')
}

NoneType = type(None)

def validate(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (dict)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'Migration 1.0', 'type': 'object', 'properties': {'uuid': {'type': 'string', 'minLength': 36, 'maxLength': 36}, 'instance_uuid': {'type': 'string', 'minLength': 36, 'maxLength': 36}, 'migration_type': {'type': 'string', 'enum': ['migration', 'resize', 'live-migration', 'evacuation']}, 'source_host': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'source_node': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'old_flavor': {'type': 'object', 'properties': {'cellplane.name': {'const': 'Flavor'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, 'new_flavor': {'type': 'object', 'properties': {'cellplane.name': {'const': 'Flavor'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}}, 'required': ['uuid', 'instance_uuid', 'migration_type', 'source_host', 'source_node', 'old_flavor', 'new_flavor'], 'additionalProperties': False, 'description': 'A move of one instance between hosts of its cell: the migration (and Placement consumer) uuid, its kind, its source, its flavors.'}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data__missing_keys = set(['uuid', 'instance_uuid', 'migration_type', 'source_host', 'source_node', 'old_flavor', 'new_flavor']) - data.keys()
        if data__missing_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must contain " + (str(sorted(data__missing_keys)) + " properties"), value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'Migration 1.0', 'type': 'object', 'properties': {'uuid': {'type': 'string', 'minLength': 36, 'maxLength': 36}, 'instance_uuid': {'type': 'string', 'minLength': 36, 'maxLength': 36}, 'migration_type': {'type': 'string', 'enum': ['migration', 'resize', 'live-migration', 'evacuation']}, 'source_host': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'source_node': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'old_flavor': {'type': 'object', 'properties': {'cellplane.name': {'const': 'Flavor'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, 'new_flavor': {'type': 'object', 'properties': {'cellplane.name': {'const': 'Flavor'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}}, 'required': ['uuid', 'instance_uuid', 'migration_type', 'source_host', 'source_node', 'old_flavor', 'new_flavor'], 'additionalProperties': False, 'description': 'A move of one instance between hosts of its cell: the migration (and Placement consumer) uuid, its kind, its source, its flavors.'}, rule='required')
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
        if "instance_uuid" in data_keys:
            data_keys.remove("instance_uuid")
            data__instanceuuid = data["instance_uuid"]
            if not isinstance(data__instanceuuid, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".instance_uuid must be string", value=data__instanceuuid, name="" + (name_prefix or "data") + ".instance_uuid", definition={'type': 'string', 'minLength': 36, 'maxLength': 36}, rule='type')
            if isinstance(data__instanceuuid, str):
                data__instanceuuid_len = len(data__instanceuuid)
                if data__instanceuuid_len < 36:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".instance_uuid must be longer than or equal to 36 characters", value=data__instanceuuid, name="" + (name_prefix or "data") + ".instance_uuid", definition={'type': 'string', 'minLength': 36, 'maxLength': 36}, rule='minLength')
                if data__instanceuuid_len > 36:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".instance_uuid must be shorter than or equal to 36 characters", value=data__instanceuuid, name="" + (name_prefix or "data") + ".instance_uuid", definition={'type': 'string', 'minLength': 36, 'maxLength': 36}, rule='maxLength')
        if "migration_type" in data_keys:
            data_keys.remove("migration_type")
            data__migrationtype = data["migration_type"]
            if not isinstance(data__migrationtype, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".migration_type must be string", value=data__migrationtype, name="" + (name_prefix or "data") + ".migration_type", definition={'type': 'string', 'enum': ['migration', 'resize', 'live-migration', 'evacuation']}, rule='type')
            if not (isinstance(data__migrationtype, str) and data__migrationtype == 'migration' or isinstance(data__migrationtype, str) and data__migrationtype == 'resize' or isinstance(data__migrationtype, str) and data__migrationtype == 'live-migration' or isinstance(data__migrationtype, str) and data__migrationtype == 'evacuation'):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".migration_type must be one of ['migration', 'resize', 'live-migration', 'evacuation']", value=data__migrationtype, name="" + (name_prefix or "data") + ".migration_type", definition={'type': 'string', 'enum': ['migration', 'resize', 'live-migration', 'evacuation']}, rule='enum')
        if "source_host" in data_keys:
            data_keys.remove("source_host")
            data__sourcehost = data["source_host"]
            if not isinstance(data__sourcehost, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".source_host must be string", value=data__sourcehost, name="" + (name_prefix or "data") + ".source_host", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='type')
            if isinstance(data__sourcehost, str):
                data__sourcehost_len = len(data__sourcehost)
                if data__sourcehost_len < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".source_host must be longer than or equal to 1 characters", value=data__sourcehost, name="" + (name_prefix or "data") + ".source_host", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='minLength')
                if data__sourcehost_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".source_host must be shorter than or equal to 255 characters", value=data__sourcehost, name="" + (name_prefix or "data") + ".source_host", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='maxLength')
        if "source_node" in data_keys:
            data_keys.remove("source_node")
            data__sourcenode = data["source_node"]
            if not isinstance(data__sourcenode, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".source_node must be string", value=data__sourcenode, name="" + (name_prefix or "data") + ".source_node", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='type')
            if isinstance(data__sourcenode, str):
                data__sourcenode_len = len(data__sourcenode)
                if data__sourcenode_len < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".source_node must be longer than or equal to 1 characters", value=data__sourcenode, name="" + (name_prefix or "data") + ".source_node", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='minLength')
                if data__sourcenode_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".source_node must be shorter than or equal to 255 characters", value=data__sourcenode, name="" + (name_prefix or "data") + ".source_node", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='maxLength')
        if "old_flavor" in data_keys:
            data_keys.remove("old_flavor")
            data__oldflavor = data["old_flavor"]
            if not isinstance(data__oldflavor, (dict)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".old_flavor must be object", value=data__oldflavor, name="" + (name_prefix or "data") + ".old_flavor", definition={'type': 'object', 'properties': {'cellplane.name': {'const': 'Flavor'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, rule='type')
            data__oldflavor_is_dict = isinstance(data__oldflavor, dict)
            if data__oldflavor_is_dict:
                data__oldflavor__missing_keys = set(['cellplane.name', 'cellplane.version', 'cellplane.data']) - data__oldflavor.keys()
                if data__oldflavor__missing_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".old_flavor must contain " + (str(sorted(data__oldflavor__missing_keys)) + " properties"), value=data__oldflavor, name="" + (name_prefix or "data") + ".old_flavor", definition={'type': 'object', 'properties': {'cellplane.name': {'const': 'Flavor'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, rule='required')
                data__oldflavor_keys = set(data__oldflavor.keys())
                if "cellplane.name" in data__oldflavor_keys:
                    data__oldflavor_keys.remove("cellplane.name")
                    data__oldflavor__cellplanename = data__oldflavor["cellplane.name"]
                    if not (isinstance(data__oldflavor__cellplanename, str) and data__oldflavor__cellplanename == 'Flavor'):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".old_flavor.cellplane.name must be same as const definition: Flavor", value=data__oldflavor__cellplanename, name="" + (name_prefix or "data") + ".old_flavor.cellplane.name", definition={'const': 'Flavor'}, rule='const')
                if "cellplane.version" in data__oldflavor_keys:
                    data__oldflavor_keys.remove("cellplane.version")
                    data__oldflavor__cellplaneversion = data__oldflavor["cellplane.version"]
                    if not isinstance(data__oldflavor__cellplaneversion, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".old_flavor.cellplane.version must be string", value=data__oldflavor__cellplaneversion, name="" + (name_prefix or "data") + ".old_flavor.cellplane.version", definition={'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, rule='type')
                    if isinstance(data__oldflavor__cellplaneversion, str):
                        if not REGEX_PATTERNS['^[0-9]+\\.[0-9]+$'].search(data__oldflavor__cellplaneversion):
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".old_flavor.cellplane.version must match pattern ^[0-9]+\\.[0-9]+$", value=data__oldflavor__cellplaneversion, name="" + (name_prefix or "data") + ".old_flavor.cellplane.version", definition={'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, rule='pattern')
                if "cellplane.data" in data__oldflavor_keys:
                    data__oldflavor_keys.remove("cellplane.data")
                    data__oldflavor__cellplanedata = data__oldflavor["cellplane.data"]
                    if not isinstance(data__oldflavor__cellplanedata, (dict)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".old_flavor.cellplane.data must be object", value=data__oldflavor__cellplanedata, name="" + (name_prefix or "data") + ".old_flavor.cellplane.data", definition={'type': 'object'}, rule='type')
                if data__oldflavor_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".old_flavor must not contain "+str(data__oldflavor_keys)+" properties", value=data__oldflavor, name="" + (name_prefix or "data") + ".old_flavor", definition={'type': 'object', 'properties': {'cellplane.name': {'const': 'Flavor'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, rule='additionalProperties')
        if "new_flavor" in data_keys:
            data_keys.remove("new_flavor")
            data__newflavor = data["new_flavor"]
            if not isinstance(data__newflavor, (dict)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".new_flavor must be object", value=data__newflavor, name="" + (name_prefix or "data") + ".new_flavor", definition={'type': 'object', 'properties': {'cellplane.name': {'const': 'Flavor'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, rule='type')
            data__newflavor_is_dict = isinstance(data__newflavor, dict)
            if data__newflavor_is_dict:
                data__newflavor__missing_keys = set(['cellplane.name', 'cellplane.version', 'cellplane.data']) - data__newflavor.keys()
                if data__newflavor__missing_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".new_flavor must contain " + (str(sorted(data__newflavor__missing_keys)) + " properties"), value=data__newflavor, name="" + (name_prefix or "data") + ".new_flavor", definition={'type': 'object', 'properties': {'cellplane.name': {'const': 'Flavor'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, rule='required')
                data__newflavor_keys = set(data__newflavor.keys())
                if "cellplane.name" in data__newflavor_keys:
                    data__newflavor_keys.remove("cellplane.name")
                    data__newflavor__cellplanename = data__newflavor["cellplane.name"]
                    if not (isinstance(data__newflavor__cellplanename, str) and data__newflavor__cellplanename == 'Flavor'):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".new_flavor.cellplane.name must be same as const definition: Flavor", value=data__newflavor__cellplanename, name="" + (name_prefix or "data") + ".new_flavor.cellplane.name", definition={'const': 'Flavor'}, rule='const')
                if "cellplane.version" in data__newflavor_keys:
                    data__newflavor_keys.remove("cellplane.version")
                    data__newflavor__cellplaneversion = data__newflavor["cellplane.version"]
                    if not isinstance(data__newflavor__cellplaneversion, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".new_flavor.cellplane.version must be string", value=data__newflavor__cellplaneversion, name="" + (name_prefix or "data") + ".new_flavor.cellplane.version", definition={'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, rule='type')
                    if isinstance(data__newflavor__cellplaneversion, str):
                        if not REGEX_PATTERNS['^[0-9]+\\.[0-9]+$'].search(data__newflavor__cellplaneversion):
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".new_flavor.cellplane.version must match pattern ^[0-9]+\\.[0-9]+$", value=data__newflavor__cellplaneversion, name="" + (name_prefix or "data") + ".new_flavor.cellplane.version", definition={'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, rule='pattern')
                if "cellplane.data" in data__newflavor_keys:
                    data__newflavor_keys.remove("cellplane.data")
                    data__newflavor__cellplanedata = data__newflavor["cellplane.data"]
                    if not isinstance(data__newflavor__cellplanedata, (dict)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".new_flavor.cellplane.data must be object", value=data__newflavor__cellplanedata, name="" + (name_prefix or "data") + ".new_flavor.cellplane.data", definition={'type': 'object'}, rule='type')
                if data__newflavor_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".new_flavor must not contain "+str(data__newflavor_keys)+" properties", value=data__newflavor, name="" + (name_prefix or "data") + ".new_flavor", definition={'type': 'object', 'properties': {'cellplane.name': {'const': 'Flavor'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, rule='additionalProperties')
        if data_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must not contain "+str(data_keys)+" properties", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'Migration 1.0', 'type': 'object', 'properties': {'uuid': {'type': 'string', 'minLength': 36, 'maxLength': 36}, 'instance_uuid': {'type': 'string', 'minLength': 36, 'maxLength': 36}, 'migration_type': {'type': 'string', 'enum': ['migration', 'resize', 'live-migration', 'evacuation']}, 'source_host': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'source_node': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'old_flavor': {'type': 'object', 'properties': {'cellplane.name': {'const': 'Flavor'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, 'new_flavor': {'type': 'object', 'properties': {'cellplane.name': {'const': 'Flavor'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}}, 'required': ['uuid', 'instance_uuid', 'migration_type', 'source_host', 'source_node', 'old_flavor', 'new_flavor'], 'additionalProperties': False, 'description': 'A move of one instance between hosts of its cell: the migration (and Placement consumer) uuid, its kind, its source, its flavors.'}, rule='additionalProperties')
    return data