"""The check of Selection-1.0.json, compiled by fastjsonschema 2.22.3.

Written by ``python -m rpc_schemas.write_schemas``; do not edit.
"""
# flake8: noqa
# ruff: noqa
SCHEMA_SHA256 = '7dc6cdcc62dd44d035774e1e6232a86e8b8019070f7dbacfcf38310943890f0d'

VERSION = "2.22.3"
from decimal import Decimal
import re
from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException


REGEX_PATTERNS = {
    '^1\\.[0-9]+$': re.compile('^1\\.[0-9]+\\Z')
}

NoneType = type(None)

def validate(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (dict)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'Selection 1.0', 'type': 'object', 'properties': {'service_host': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'nodename': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'compute_node_uuid': {'type': 'string', 'minLength': 1, 'maxLength': 36}, 'cell_uuid': {'type': 'string', 'minLength': 1, 'maxLength': 36}, 'allocation_request': {'type': 'object', 'additionalProperties': {}}, 'allocation_request_version': {'type': 'string', 'pattern': '^1\\.[0-9]+$'}, 'limits': {'type': 'object', 'additionalProperties': {'type': 'integer'}}, 'availability_zone': {'maxLength': 255, 'type': ['string', 'null']}}, 'required': ['service_host', 'nodename', 'compute_node_uuid', 'cell_uuid', 'allocation_request', 'allocation_request_version'], 'additionalProperties': False, 'description': 'A host chosen for an instance, with the Placement allocation request that claims it.'}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data__missing_keys = set(['service_host', 'nodename', 'compute_node_uuid', 'cell_uuid', 'allocation_request', 'allocation_request_version']) - data.keys()
        if data__missing_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must contain " + (str(sorted(data__missing_keys)) + " properties"), value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'Selection 1.0', 'type': 'object', 'properties': {'service_host': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'nodename': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'compute_node_uuid': {'type': 'string', 'minLength': 1, 'maxLength': 36}, 'cell_uuid': {'type': 'string', 'minLength': 1, 'maxLength': 36}, 'allocation_request': {'type': 'object', 'additionalProperties': {}}, 'allocation_request_version': {'type': 'string', 'pattern': '^1\\.[0-9]+$'}, 'limits': {'type': 'object', 'additionalProperties': {'type': 'integer'}}, 'availability_zone': {'maxLength': 255, 'type': ['string', 'null']}}, 'required': ['service_host', 'nodename', 'compute_node_uuid', 'cell_uuid', 'allocation_request', 'allocation_request_version'], 'additionalProperties': False, 'description': 'A host chosen for an instance, with the Placement allocation request that claims it.'}, rule='required')
        data_keys = set(data.keys())
        if "service_host" in data_keys:
            data_keys.remove("service_host")
            data__servicehost = data["service_host"]
            if not isinstance(data__servicehost, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".service_host must be string", value=data__servicehost, name="" + (name_prefix or "data") + ".service_host", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='type')
            if isinstance(data__servicehost, str):
                data__servicehost_len = len(data__servicehost)
                if data__servicehost_len < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".service_host must be longer than or equal to 1 characters", value=data__servicehost, name="" + (name_prefix or "data") + ".service_host", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='minLength')
                if data__servicehost_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".service_host must be shorter than or equal to 255 characters", value=data__servicehost, name="" + (name_prefix or "data") + ".service_host", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='maxLength')
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
        if "compute_node_uuid" in data_keys:
            data_keys.remove("compute_node_uuid")
            data__computenodeuuid = data["compute_node_uuid"]
            if not isinstance(data__computenodeuuid, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".compute_node_uuid must be string", value=data__computenodeuuid, name="" + (name_prefix or "data") + ".compute_node_uuid", definition={'type': 'string', 'minLength': 1, 'maxLength': 36}, rule='type')
            if isinstance(data__computenodeuuid, str):
                data__computenodeuuid_len = len(data__computenodeuuid)
                if data__computenodeuuid_len < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".compute_node_uuid must be longer than or equal to 1 characters", value=data__computenodeuuid, name="" + (name_prefix or "data") + ".compute_node_uuid", definition={'type': 'string', 'minLength': 1, 'maxLength': 36}, rule='minLength')
                if data__computenodeuuid_len > 36:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".compute_node_uuid must be shorter than or equal to 36 characters", value=data__computenodeuuid, name="" + (name_prefix or "data") + ".compute_node_uuid", definition={'type': 'string', 'minLength': 1, 'maxLength': 36}, rule='maxLength')
        if "cell_uuid" in data_keys:
            data_keys.remove("cell_uuid")
            data__celluuid = data["cell_uuid"]
            if not isinstance(data__celluuid, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".cell_uuid must be string", value=data__celluuid, name="" + (name_prefix or "data") + ".cell_uuid", definition={'type': 'string', 'minLength': 1, 'maxLength': 36}, rule='type')
            if isinstance(data__celluuid, str):
                data__celluuid_len = len(data__celluuid)
                if data__celluuid_len < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".cell_uuid must be longer than or equal to 1 characters", value=data__celluuid, name="" + (name_prefix or "data") + ".cell_uuid", definition={'type': 'string', 'minLength': 1, 'maxLength': 36}, rule='minLength')
                if data__celluuid_len > 36:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".cell_uuid must be shorter than or equal to 36 characters", value=data__celluuid, name="" + (name_prefix or "data") + ".cell_uuid", definition={'type': 'string', 'minLength': 1, 'maxLength': 36}, rule='maxLength')
        if "allocation_request" in data_keys:
            data_keys.remove("allocation_request")
            data__allocationrequest = data["allocation_request"]
            if not isinstance(data__allocationrequest, (dict)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".allocation_request must be object", value=data__allocationrequest, name="" + (name_prefix or "data") + ".allocation_request", definition={'type': 'object', 'additionalProperties': {}}, rule='type')
            data__allocationrequest_is_dict = isinstance(data__allocationrequest, dict)
            if data__allocationrequest_is_dict:
                data__allocationrequest_keys = set(data__allocationrequest.keys())
        if "allocation_request_version" in data_keys:
            data_keys.remove("allocation_request_version")
            data__allocationrequestversion = data["allocation_request_version"]
            if not isinstance(data__allocationrequestversion, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".allocation_request_version must be string", value=data__allocationrequestversion, name="" + (name_prefix or "data") + ".allocation_request_version", definition={'type': 'string', 'pattern': '^1\\.[0-9]+$'}, rule='type')
            if isinstance(data__allocationrequestversion, str):
                if not REGEX_PATTERNS['^1\\.[0-9]+$'].search(data__allocationrequestversion):
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".allocation_request_version must match pattern ^1\\.[0-9]+$", value=data__allocationrequestversion, name="" + (name_prefix or "data") + ".allocation_request_version", definition={'type': 'string', 'pattern': '^1\\.[0-9]+$'}, rule='pattern')
        if "limits" in data_keys:
            data_keys.remove("limits")
            data__limits = data["limits"]
            if not isinstance(data__limits, (dict)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".limits must be object", value=data__limits, name="" + (name_prefix or "data") + ".limits", definition={'type': 'object', 'additionalProperties': {'type': 'integer'}}, rule='type')
            data__limits_is_dict = isinstance(data__limits, dict)
            if data__limits_is_dict:
                data__limits_keys = set(data__limits.keys())
                for data__limits_key in data__limits_keys:
                    if data__limits_key not in []:
                        data__limits_value = data__limits.get(data__limits_key)
                        if not isinstance(data__limits_value, (int)) and not (isinstance(data__limits_value, float) and data__limits_value.is_integer()) or isinstance(data__limits_value, bool):
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".limits.{data__limits_key}".format(**locals()) + " must be integer", value=data__limits_value, name="" + (name_prefix or "data") + ".limits.{data__limits_key}".format(**locals()) + "", definition={'type': 'integer'}, rule='type')
        if "availability_zone" in data_keys:
            data_keys.remove("availability_zone")
            data__availabilityzone = data["availability_zone"]
            if not isinstance(data__availabilityzone, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".availability_zone must be string or null", value=data__availabilityzone, name="" + (name_prefix or "data") + ".availability_zone", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='type')
            if isinstance(data__availabilityzone, str):
                data__availabilityzone_len = len(data__availabilityzone)
                if data__availabilityzone_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".availability_zone must be shorter than or equal to 255 characters", value=data__availabilityzone, name="" + (name_prefix or "data") + ".availability_zone", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='maxLength')
        if data_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must not contain "+str(data_keys)+" properties", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'Selection 1.0', 'type': 'object', 'properties': {'service_host': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'nodename': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'compute_node_uuid': {'type': 'string', 'minLength': 1, 'maxLength': 36}, 'cell_uuid': {'type': 'string', 'minLength': 1, 'maxLength': 36}, 'allocation_request': {'type': 'object', 'additionalProperties': {}}, 'allocation_request_version': {'type': 'string', 'pattern': '^1\\.[0-9]+$'}, 'limits': {'type': 'object', 'additionalProperties': {'type': 'integer'}}, 'availability_zone': {'maxLength': 255, 'type': ['string', 'null']}}, 'required': ['service_host', 'nodename', 'compute_node_uuid', 'cell_uuid', 'allocation_request', 'allocation_request_version'], 'additionalProperties': False, 'description': 'A host chosen for an instance, with the Placement allocation request that claims it.'}, rule='additionalProperties')
    return data