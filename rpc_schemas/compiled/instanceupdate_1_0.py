"""The check of InstanceUpdate-1.0.json, compiled by fastjsonschema 2.22.3.

Written by ``python -m rpc_schemas.write_schemas``; do not edit.
"""
# flake8: noqa
# ruff: noqa
SCHEMA_SHA256 = '69239403c6a568bd9ae473674f527a7600ff513cf65c026e2977ad65bff6c878'

VERSION = "2.22.3"
from decimal import Decimal
import re
from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException


REGEX_PATTERNS = {
    'date-time_re_pattern': re.compile('^(?:\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8]))|(?:\\d\\d(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)(t|T)(?:[01]\\d|2[0-3]):[0-5]\\d:(?:[0-5]\\d|60)(?:\\.\\d+)?(?:[+-](?:[01]\\d|2[0-3]):[0-5]\\d|[+-](?:[01]\\d|2[0-3])[0-5]\\d|z|Z)\\Z'),
    '^[0-9]+\\.[0-9]+$': re.compile('^[0-9]+\\.[0-9]+\\Z')
}

NoneType = type(None)

def validate(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (dict)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'InstanceUpdate 1.0', 'type': 'object', 'properties': {'instance_uuid': {'type': 'string', 'minLength': 36, 'maxLength': 36}, 'vm_state': {'type': 'string', 'enum': ['building', 'active', 'error', 'deleted']}, 'task_state': {'enum': ['scheduling', 'spawning', 'deleting', None], 'type': ['string', 'null']}, 'host': {'maxLength': 255, 'type': ['string', 'null']}, 'node': {'maxLength': 255, 'type': ['string', 'null']}, 'launched_at': {'type': ['string', 'null'], 'format': 'date-time'}, 'attempt': {'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'BuildAttempt'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, 'fault_message': {'maxLength': 65535, 'type': ['string', 'null']}}, 'required': ['instance_uuid', 'vm_state'], 'additionalProperties': False, 'description': "A change of one instance's state, reported by the host that made it, with the build attempt behind it if any."}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data__missing_keys = set(['instance_uuid', 'vm_state']) - data.keys()
        if data__missing_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must contain " + (str(sorted(data__missing_keys)) + " properties"), value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'InstanceUpdate 1.0', 'type': 'object', 'properties': {'instance_uuid': {'type': 'string', 'minLength': 36, 'maxLength': 36}, 'vm_state': {'type': 'string', 'enum': ['building', 'active', 'error', 'deleted']}, 'task_state': {'enum': ['scheduling', 'spawning', 'deleting', None], 'type': ['string', 'null']}, 'host': {'maxLength': 255, 'type': ['string', 'null']}, 'node': {'maxLength': 255, 'type': ['string', 'null']}, 'launched_at': {'type': ['string', 'null'], 'format': 'date-time'}, 'attempt': {'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'BuildAttempt'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, 'fault_message': {'maxLength': 65535, 'type': ['string', 'null']}}, 'required': ['instance_uuid', 'vm_state'], 'additionalProperties': False, 'description': "A change of one instance's state, reported by the host that made it, with the build attempt behind it if any."}, rule='required')
        data_keys = set(data.keys())
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
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".task_state must be string or null", value=data__taskstate, name="" + (name_prefix or "data") + ".task_state", definition={'enum': ['scheduling', 'spawning', 'deleting', None], 'type': ['string', 'null']}, rule='type')
            if not (isinstance(data__taskstate, str) and data__taskstate == 'scheduling' or isinstance(data__taskstate, str) and data__taskstate == 'spawning' or isinstance(data__taskstate, str) and data__taskstate == 'deleting' or data__taskstate is None):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".task_state must be one of ['scheduling', 'spawning', 'deleting', None]", value=data__taskstate, name="" + (name_prefix or "data") + ".task_state", definition={'enum': ['scheduling', 'spawning', 'deleting', None], 'type': ['string', 'null']}, rule='enum')
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
        if "launched_at" in data_keys:
            data_keys.remove("launched_at")
            data__launchedat = data["launched_at"]
            if not isinstance(data__launchedat, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".launched_at must be string or null", value=data__launchedat, name="" + (name_prefix or "data") + ".launched_at", definition={'type': ['string', 'null'], 'format': 'date-time'}, rule='type')
            if isinstance(data__launchedat, str):
                if not REGEX_PATTERNS["date-time_re_pattern"].match(data__launchedat):
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".launched_at must be date-time", value=data__launchedat, name="" + (name_prefix or "data") + ".launched_at", definition={'type': ['string', 'null'], 'format': 'date-time'}, rule='format')
        if "attempt" in data_keys:
            data_keys.remove("attempt")
            data__attempt = data["attempt"]
            if not isinstance(data__attempt, (dict, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".attempt must be object or null", value=data__attempt, name="" + (name_prefix or "data") + ".attempt", definition={'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'BuildAttempt'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, rule='type')
            data__attempt_is_dict = isinstance(data__attempt, dict)
            if data__attempt_is_dict:
                data__attempt__missing_keys = set(['cellplane.name', 'cellplane.version', 'cellplane.data']) - data__attempt.keys()
                if data__attempt__missing_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".attempt must contain " + (str(sorted(data__attempt__missing_keys)) + " properties"), value=data__attempt, name="" + (name_prefix or "data") + ".attempt", definition={'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'BuildAttempt'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, rule='required')
                data__attempt_keys = set(data__attempt.keys())
                if "cellplane.name" in data__attempt_keys:
                    data__attempt_keys.remove("cellplane.name")
                    data__attempt__cellplanename = data__attempt["cellplane.name"]
                    if not (isinstance(data__attempt__cellplanename, str) and data__attempt__cellplanename == 'BuildAttempt'):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".attempt.cellplane.name must be same as const definition: BuildAttempt", value=data__attempt__cellplanename, name="" + (name_prefix or "data") + ".attempt.cellplane.name", definition={'const': 'BuildAttempt'}, rule='const')
                if "cellplane.version" in data__attempt_keys:
                    data__attempt_keys.remove("cellplane.version")
                    data__attempt__cellplaneversion = data__attempt["cellplane.version"]
                    if not isinstance(data__attempt__cellplaneversion, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".attempt.cellplane.version must be string", value=data__attempt__cellplaneversion, name="" + (name_prefix or "data") + ".attempt.cellplane.version", definition={'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, rule='type')
                    if isinstance(data__attempt__cellplaneversion, str):
                        if not REGEX_PATTERNS['^[0-9]+\\.[0-9]+$'].search(data__attempt__cellplaneversion):
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".attempt.cellplane.version must match pattern ^[0-9]+\\.[0-9]+$", value=data__attempt__cellplaneversion, name="" + (name_prefix or "data") + ".attempt.cellplane.version", definition={'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, rule='pattern')
                if "cellplane.data" in data__attempt_keys:
                    data__attempt_keys.remove("cellplane.data")
                    data__attempt__cellplanedata = data__attempt["cellplane.data"]
                    if not isinstance(data__attempt__cellplanedata, (dict)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".attempt.cellplane.data must be object", value=data__attempt__cellplanedata, name="" + (name_prefix or "data") + ".attempt.cellplane.data", definition={'type': 'object'}, rule='type')
                if data__attempt_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".attempt must not contain "+str(data__attempt_keys)+" properties", value=data__attempt, name="" + (name_prefix or "data") + ".attempt", definition={'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'BuildAttempt'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, rule='additionalProperties')
        if "fault_message" in data_keys:
            data_keys.remove("fault_message")
            data__faultmessage = data["fault_message"]
            if not isinstance(data__faultmessage, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".fault_message must be string or null", value=data__faultmessage, name="" + (name_prefix or "data") + ".fault_message", definition={'maxLength': 65535, 'type': ['string', 'null']}, rule='type')
            if isinstance(data__faultmessage, str):
                data__faultmessage_len = len(data__faultmessage)
                if data__faultmessage_len > 65535:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".fault_message must be shorter than or equal to 65535 characters", value=data__faultmessage, name="" + (name_prefix or "data") + ".fault_message", definition={'maxLength': 65535, 'type': ['string', 'null']}, rule='maxLength')
        if data_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must not contain "+str(data_keys)+" properties", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'InstanceUpdate 1.0', 'type': 'object', 'properties': {'instance_uuid': {'type': 'string', 'minLength': 36, 'maxLength': 36}, 'vm_state': {'type': 'string', 'enum': ['building', 'active', 'error', 'deleted']}, 'task_state': {'enum': ['scheduling', 'spawning', 'deleting', None], 'type': ['string', 'null']}, 'host': {'maxLength': 255, 'type': ['string', 'null']}, 'node': {'maxLength': 255, 'type': ['string', 'null']}, 'launched_at': {'type': ['string', 'null'], 'format': 'date-time'}, 'attempt': {'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'BuildAttempt'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, 'fault_message': {'maxLength': 65535, 'type': ['string', 'null']}}, 'required': ['instance_uuid', 'vm_state'], 'additionalProperties': False, 'description': "A change of one instance's state, reported by the host that made it, with the build attempt behind it if any."}, rule='additionalProperties')
    return data