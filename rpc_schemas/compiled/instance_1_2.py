"""The check of Instance-1.2.json, compiled by fastjsonschema 2.22.3.

Written by ``python -m rpc_schemas.write_schemas``; do not edit.
"""
# flake8: noqa
# ruff: noqa
SCHEMA_SHA256 = '7eaf72d60e894c4dc8ea522392cf27772dc58e2777efe5b372e8783f63def869'

VERSION = "2.22.3"
from decimal import Decimal
import re
from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException


REGEX_PATTERNS = {
    '^[0-9]+\\.[0-9]+$': re.compile('^[0-9]+\\.[0-9]+\\Z'),
    'date-time_re_pattern': re.compile('^(?:\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8]))|(?:\\d\\d(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)(t|T)(?:[01]\\d|2[0-3]):[0-5]\\d:(?:[0-5]\\d|60)(?:\\.\\d+)?(?:[+-](?:[01]\\d|2[0-3]):[0-5]\\d|[+-](?:[01]\\d|2[0-3])[0-5]\\d|z|Z)\\Z')
}

NoneType = type(None)

def validate(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (dict)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'Instance 1.2', 'type': 'object', 'properties': {'uuid': {'type': 'string', 'minLength': 36, 'maxLength': 36}, 'project_id': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'user_id': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'flavor': {'type': 'object', 'properties': {'cellplane.name': {'const': 'Flavor'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, 'display_name': {'maxLength': 255, 'type': ['string', 'null']}, 'image_properties': {'type': 'object', 'additionalProperties': {'type': 'string'}}, 'availability_zone': {'maxLength': 255, 'type': ['string', 'null']}, 'vm_state': {'type': 'string', 'enum': ['building', 'active', 'error', 'deleted']}, 'task_state': {'maxLength': 32, 'type': ['string', 'null']}, 'host': {'maxLength': 255, 'type': ['string', 'null']}, 'node': {'maxLength': 255, 'type': ['string', 'null']}, 'cell_uuid': {'maxLength': 36, 'type': ['string', 'null']}, 'launched_at': {'type': ['string', 'null'], 'format': 'date-time'}, 'image_ref': {'maxLength': 255, 'type': ['string', 'null']}, 'description': {'maxLength': 255, 'type': ['string', 'null']}, 'launch_index': {'type': 'integer', 'minimum': 0}}, 'required': ['uuid', 'project_id', 'user_id', 'flavor'], 'additionalProperties': False, 'description': 'One instance as a build needs it: who owns it, its size, its image properties and where it is (to be) built.'}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data__missing_keys = set(['uuid', 'project_id', 'user_id', 'flavor']) - data.keys()
        if data__missing_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must contain " + (str(sorted(data__missing_keys)) + " properties"), value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'Instance 1.2', 'type': 'object', 'properties': {'uuid': {'type': 'string', 'minLength': 36, 'maxLength': 36}, 'project_id': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'user_id': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'flavor': {'type': 'object', 'properties': {'cellplane.name': {'const': 'Flavor'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, 'display_name': {'maxLength': 255, 'type': ['string', 'null']}, 'image_properties': {'type': 'object', 'additionalProperties': {'type': 'string'}}, 'availability_zone': {'maxLength': 255, 'type': ['string', 'null']}, 'vm_state': {'type': 'string', 'enum': ['building', 'active', 'error', 'deleted']}, 'task_state': {'maxLength': 32, 'type': ['string', 'null']}, 'host': {'maxLength': 255, 'type': ['string', 'null']}, 'node': {'maxLength': 255, 'type': ['string', 'null']}, 'cell_uuid': {'maxLength': 36, 'type': ['string', 'null']}, 'launched_at': {'type': ['string', 'null'], 'format': 'date-time'}, 'image_ref': {'maxLength': 255, 'type': ['string', 'null']}, 'description': {'maxLength': 255, 'type': ['string', 'null']}, 'launch_index': {'type': 'integer', 'minimum': 0}}, 'required': ['uuid', 'project_id', 'user_id', 'flavor'], 'additionalProperties': False, 'description': 'One instance as a build needs it: who owns it, its size, its image properties and where it is (to be) built.'}, rule='required')
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
        if "project_id" in data_keys:
            data_keys.remove("project_id")
            data__projectid = data["project_id"]
            if not isinstance(data__projectid, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".project_id must be string", value=data__projectid, name="" + (name_prefix or "data") + ".project_id", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='type')
            if isinstance(data__projectid, str):
                data__projectid_len = len(data__projectid)
                if data__projectid_len < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".project_id must be longer than or equal to 1 characters", value=data__projectid, name="" + (name_prefix or "data") + ".project_id", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='minLength')
                if data__projectid_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".project_id must be shorter than or equal to 255 characters", value=data__projectid, name="" + (name_prefix or "data") + ".project_id", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='maxLength')
        if "user_id" in data_keys:
            data_keys.remove("user_id")
            data__userid = data["user_id"]
            if not isinstance(data__userid, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".user_id must be string", value=data__userid, name="" + (name_prefix or "data") + ".user_id", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='type')
            if isinstance(data__userid, str):
                data__userid_len = len(data__userid)
                if data__userid_len < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".user_id must be longer than or equal to 1 characters", value=data__userid, name="" + (name_prefix or "data") + ".user_id", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='minLength')
                if data__userid_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".user_id must be shorter than or equal to 255 characters", value=data__userid, name="" + (name_prefix or "data") + ".user_id", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='maxLength')
        if "flavor" in data_keys:
            data_keys.remove("flavor")
            data__flavor = data["flavor"]
            if not isinstance(data__flavor, (dict)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".flavor must be object", value=data__flavor, name="" + (name_prefix or "data") + ".flavor", definition={'type': 'object', 'properties': {'cellplane.name': {'const': 'Flavor'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, rule='type')
            data__flavor_is_dict = isinstance(data__flavor, dict)
            if data__flavor_is_dict:
                data__flavor__missing_keys = set(['cellplane.name', 'cellplane.version', 'cellplane.data']) - data__flavor.keys()
                if data__flavor__missing_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".flavor must contain " + (str(sorted(data__flavor__missing_keys)) + " properties"), value=data__flavor, name="" + (name_prefix or "data") + ".flavor", definition={'type': 'object', 'properties': {'cellplane.name': {'const': 'Flavor'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, rule='required')
                data__flavor_keys = set(data__flavor.keys())
                if "cellplane.name" in data__flavor_keys:
                    data__flavor_keys.remove("cellplane.name")
                    data__flavor__cellplanename = data__flavor["cellplane.name"]
                    if not (isinstance(data__flavor__cellplanename, str) and data__flavor__cellplanename == 'Flavor'):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".flavor.cellplane.name must be same as const definition: Flavor", value=data__flavor__cellplanename, name="" + (name_prefix or "data") + ".flavor.cellplane.name", definition={'const': 'Flavor'}, rule='const')
                if "cellplane.version" in data__flavor_keys:
                    data__flavor_keys.remove("cellplane.version")
                    data__flavor__cellplaneversion = data__flavor["cellplane.version"]
                    if not isinstance(data__flavor__cellplaneversion, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".flavor.cellplane.version must be string", value=data__flavor__cellplaneversion, name="" + (name_prefix or "data") + ".flavor.cellplane.version", definition={'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, rule='type')
                    if isinstance(data__flavor__cellplaneversion, str):
                        if not REGEX_PATTERNS['^[0-9]+\\.[0-9]+$'].search(data__flavor__cellplaneversion):
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".flavor.cellplane.version must match pattern ^[0-9]+\\.[0-9]+$", value=data__flavor__cellplaneversion, name="" + (name_prefix or "data") + ".flavor.cellplane.version", definition={'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, rule='pattern')
                if "cellplane.data" in data__flavor_keys:
                    data__flavor_keys.remove("cellplane.data")
                    data__flavor__cellplanedata = data__flavor["cellplane.data"]
                    if not isinstance(data__flavor__cellplanedata, (dict)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".flavor.cellplane.data must be object", value=data__flavor__cellplanedata, name="" + (name_prefix or "data") + ".flavor.cellplane.data", definition={'type': 'object'}, rule='type')
                if data__flavor_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".flavor must not contain "+str(data__flavor_keys)+" properties", value=data__flavor, name="" + (name_prefix or "data") + ".flavor", definition={'type': 'object', 'properties': {'cellplane.name': {'const': 'Flavor'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, rule='additionalProperties')
        if "display_name" in data_keys:
            data_keys.remove("display_name")
            data__displayname = data["display_name"]
            if not isinstance(data__displayname, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".display_name must be string or null", value=data__displayname, name="" + (name_prefix or "data") + ".display_name", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='type')
            if isinstance(data__displayname, str):
                data__displayname_len = len(data__displayname)
                if data__displayname_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".display_name must be shorter than or equal to 255 characters", value=data__displayname, name="" + (name_prefix or "data") + ".display_name", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='maxLength')
        if "image_properties" in data_keys:
            data_keys.remove("image_properties")
            data__imageproperties = data["image_properties"]
            if not isinstance(data__imageproperties, (dict)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".image_properties must be object", value=data__imageproperties, name="" + (name_prefix or "data") + ".image_properties", definition={'type': 'object', 'additionalProperties': {'type': 'string'}}, rule='type')
            data__imageproperties_is_dict = isinstance(data__imageproperties, dict)
            if data__imageproperties_is_dict:
                data__imageproperties_keys = set(data__imageproperties.keys())
                for data__imageproperties_key in data__imageproperties_keys:
                    if data__imageproperties_key not in []:
                        data__imageproperties_value = data__imageproperties.get(data__imageproperties_key)
                        if not isinstance(data__imageproperties_value, (str)):
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".image_properties.{data__imageproperties_key}".format(**locals()) + " must be string", value=data__imageproperties_value, name="" + (name_prefix or "data") + ".image_properties.{data__imageproperties_key}".format(**locals()) + "", definition={'type': 'string'}, rule='type')
        if "availability_zone" in data_keys:
            data_keys.remove("availability_zone")
            data__availabilityzone = data["availability_zone"]
            if not isinstance(data__availabilityzone, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".availability_zone must be string or null", value=data__availabilityzone, name="" + (name_prefix or "data") + ".availability_zone", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='type')
            if isinstance(data__availabilityzone, str):
                data__availabilityzone_len = len(data__availabilityzone)
                if data__availabilityzone_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".availability_zone must be shorter than or equal to 255 characters", value=data__availabilityzone, name="" + (name_prefix or "data") + ".availability_zone", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='maxLength')
        if "vm_state" in data_keys:
            data_keys.remove("vm_state")
            data__vmstate = data["vm_state"]
            if not isinstance(data__vmstate, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".vm_state must be string", value=data__vmstate, name="" + (name_prefix or "data") + ".vm_state", definition={'type': 'string', 'enum': ['building', 'active', 'error', 'deleted']}, rule='type')
            if not (isinstance(data__vmstate, str) and data__vmstate == 'building' or isinstance(data__vmstate, str) and data__vmstate == 'active' or isinstance(data__vmstate, str) and data__vmstate == 'error' or isinstance(data__vmstate, str) and data__vmstate == 'deleted'):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".vm_state must be one of ['building', 'active', 'error', 'deleted']", value=data__vmstate, name="" + (name_prefix or "data") + ".vm_state", definition={'type': 'string', 'enum': ['building', 'active', 'error', 'deleted']}, rule='enum')
        if "task_state" in data_keys:
            data_keys.remove("task_state")
            data__taskstate = data["task_state"]
            if not isinstance(data__taskstate, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".task_state must be string or null", value=data__taskstate, name="" + (name_prefix or "data") + ".task_state", definition={'maxLength': 32, 'type': ['string', 'null']}, rule='type')
            if isinstance(data__taskstate, str):
                data__taskstate_len = len(data__taskstate)
                if data__taskstate_len > 32:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".task_state must be shorter than or equal to 32 characters", value=data__taskstate, name="" + (name_prefix or "data") + ".task_state", definition={'maxLength': 32, 'type': ['string', 'null']}, rule='maxLength')
        if "host" in data_keys:
            data_keys.remove("host")
            data__host = data["host"]
            if not isinstance(data__host, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".host must be string or null", value=data__host, name="" + (name_prefix or "data") + ".host", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='type')
            if isinstance(data__host, str):
                data__host_len = len(data__host)
                if data__host_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".host must be shorter than or equal to 255 characters", value=data__host, name="" + (name_prefix or "data") + ".host", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='maxLength')
        if "node" in data_keys:
            data_keys.remove("node")
            data__node = data["node"]
            if not isinstance(data__node, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".node must be string or null", value=data__node, name="" + (name_prefix or "data") + ".node", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='type')
            if isinstance(data__node, str):
                data__node_len = len(data__node)
                if data__node_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".node must be shorter than or equal to 255 characters", value=data__node, name="" + (name_prefix or "data") + ".node", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='maxLength')
        if "cell_uuid" in data_keys:
            data_keys.remove("cell_uuid")
            data__celluuid = data["cell_uuid"]
            if not isinstance(data__celluuid, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".cell_uuid must be string or null", value=data__celluuid, name="" + (name_prefix or "data") + ".cell_uuid", definition={'maxLength': 36, 'type': ['string', 'null']}, rule='type')
            if isinstance(data__celluuid, str):
                data__celluuid_len = len(data__celluuid)
                if data__celluuid_len > 36:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".cell_uuid must be shorter than or equal to 36 characters", value=data__celluuid, name="" + (name_prefix or "data") + ".cell_uuid", definition={'maxLength': 36, 'type': ['string', 'null']}, rule='maxLength')
        if "launched_at" in data_keys:
            data_keys.remove("launched_at")
            data__launchedat = data["launched_at"]
            if not isinstance(data__launchedat, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".launched_at must be string or null", value=data__launchedat, name="" + (name_prefix or "data") + ".launched_at", definition={'type': ['string', 'null'], 'format': 'date-time'}, rule='type')
            if isinstance(data__launchedat, str):
                if not REGEX_PATTERNS["date-time_re_pattern"].match(data__launchedat):
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".launched_at must be date-time", value=data__launchedat, name="" + (name_prefix or "data") + ".launched_at", definition={'type': ['string', 'null'], 'format': 'date-time'}, rule='format')
        if "image_ref" in data_keys:
            data_keys.remove("image_ref")
            data__imageref = data["image_ref"]
            if not isinstance(data__imageref, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".image_ref must be string or null", value=data__imageref, name="" + (name_prefix or "data") + ".image_ref", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='type')
            if isinstance(data__imageref, str):
                data__imageref_len = len(data__imageref)
                if data__imageref_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".image_ref must be shorter than or equal to 255 characters", value=data__imageref, name="" + (name_prefix or "data") + ".image_ref", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='maxLength')
        if "description" in data_keys:
            data_keys.remove("description")
            data__description = data["description"]
            if not isinstance(data__description, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".description must be string or null", value=data__description, name="" + (name_prefix or "data") + ".description", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='type')
            if isinstance(data__description, str):
                data__description_len = len(data__description)
                if data__description_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".description must be shorter than or equal to 255 characters", value=data__description, name="" + (name_prefix or "data") + ".description", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='maxLength')
        if "launch_index" in data_keys:
            data_keys.remove("launch_index")
            data__launchindex = data["launch_index"]
            if not isinstance(data__launchindex, (int)) and not (isinstance(data__launchindex, float) and data__launchindex.is_integer()) or isinstance(data__launchindex, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".launch_index must be integer", value=data__launchindex, name="" + (name_prefix or "data") + ".launch_index", definition={'type': 'integer', 'minimum': 0}, rule='type')
            if isinstance(data__launchindex, (int, float, Decimal)) and not isinstance(data__launchindex, bool):
                if data__launchindex < 0:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".launch_index must be bigger than or equal to 0", value=data__launchindex, name="" + (name_prefix or "data") + ".launch_index", definition={'type': 'integer', 'minimum': 0}, rule='minimum')
        if data_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must not contain "+str(data_keys)+" properties", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'Instance 1.2', 'type': 'object', 'properties': {'uuid': {'type': 'string', 'minLength': 36, 'maxLength': 36}, 'project_id': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'user_id': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'flavor': {'type': 'object', 'properties': {'cellplane.name': {'const': 'Flavor'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, 'display_name': {'maxLength': 255, 'type': ['string', 'null']}, 'image_properties': {'type': 'object', 'additionalProperties': {'type': 'string'}}, 'availability_zone': {'maxLength': 255, 'type': ['string', 'null']}, 'vm_state': {'type': 'string', 'enum': ['building', 'active', 'error', 'deleted']}, 'task_state': {'maxLength': 32, 'type': ['string', 'null']}, 'host': {'maxLength': 255, 'type': ['string', 'null']}, 'node': {'maxLength': 255, 'type': ['string', 'null']}, 'cell_uuid': {'maxLength': 36, 'type': ['string', 'null']}, 'launched_at': {'type': ['string', 'null'], 'format': 'date-time'}, 'image_ref': {'maxLength': 255, 'type': ['string', 'null']}, 'description': {'maxLength': 255, 'type': ['string', 'null']}, 'launch_index': {'type': 'integer', 'minimum': 0}}, 'required': ['uuid', 'project_id', 'user_id', 'flavor'], 'additionalProperties': False, 'description': 'One instance as a build needs it: who owns it, its size, its image properties and where it is (to be) built.'}, rule='additionalProperties')
    return data