"""The check of ServiceStatus-1.1.json, compiled by fastjsonschema 2.22.3.

Written by ``python -m rpc_schemas.write_schemas``; do not edit.
"""
# flake8: noqa
# ruff: noqa
SCHEMA_SHA256 = 'f0e318b2cb5ba6120e6d746cf4b6f830e86e93ef8b1b6ffc6ff1ec5968803cc4'

VERSION = "2.22.3"
from decimal import Decimal
import re
from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException


REGEX_PATTERNS = {
    'date-time_re_pattern': re.compile('^(?:\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8]))|(?:\\d\\d(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)(t|T)(?:[01]\\d|2[0-3]):[0-5]\\d:(?:[0-5]\\d|60)(?:\\.\\d+)?(?:[+-](?:[01]\\d|2[0-3]):[0-5]\\d|[+-](?:[01]\\d|2[0-3])[0-5]\\d|z|Z)\\Z')
}

NoneType = type(None)

def validate(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (dict)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'ServiceStatus 1.1', 'type': 'object', 'properties': {'host': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'binary': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'topic': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'report_time': {'type': 'string', 'format': 'date-time'}, 'version': {'type': 'string', 'maxLength': 32}, 'cell_name': {'maxLength': 255, 'type': ['string', 'null']}, 'disabled': {'type': 'boolean'}, 'disabled_reason': {'maxLength': 255, 'type': ['string', 'null']}, 'building': {'type': ['array', 'null'], 'items': {'type': 'string'}}}, 'required': ['host', 'binary', 'topic', 'report_time', 'version'], 'additionalProperties': False, 'description': 'Heartbeat of one service on one host.'}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data__missing_keys = set(['host', 'binary', 'topic', 'report_time', 'version']) - data.keys()
        if data__missing_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must contain " + (str(sorted(data__missing_keys)) + " properties"), value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'ServiceStatus 1.1', 'type': 'object', 'properties': {'host': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'binary': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'topic': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'report_time': {'type': 'string', 'format': 'date-time'}, 'version': {'type': 'string', 'maxLength': 32}, 'cell_name': {'maxLength': 255, 'type': ['string', 'null']}, 'disabled': {'type': 'boolean'}, 'disabled_reason': {'maxLength': 255, 'type': ['string', 'null']}, 'building': {'type': ['array', 'null'], 'items': {'type': 'string'}}}, 'required': ['host', 'binary', 'topic', 'report_time', 'version'], 'additionalProperties': False, 'description': 'Heartbeat of one service on one host.'}, rule='required')
        data_keys = set(data.keys())
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
        if "binary" in data_keys:
            data_keys.remove("binary")
            data__binary = data["binary"]
            if not isinstance(data__binary, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".binary must be string", value=data__binary, name="" + (name_prefix or "data") + ".binary", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='type')
            if isinstance(data__binary, str):
                data__binary_len = len(data__binary)
                if data__binary_len < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".binary must be longer than or equal to 1 characters", value=data__binary, name="" + (name_prefix or "data") + ".binary", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='minLength')
                if data__binary_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".binary must be shorter than or equal to 255 characters", value=data__binary, name="" + (name_prefix or "data") + ".binary", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='maxLength')
        if "topic" in data_keys:
            data_keys.remove("topic")
            data__topic = data["topic"]
            if not isinstance(data__topic, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".topic must be string", value=data__topic, name="" + (name_prefix or "data") + ".topic", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='type')
            if isinstance(data__topic, str):
                data__topic_len = len(data__topic)
                if data__topic_len < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".topic must be longer than or equal to 1 characters", value=data__topic, name="" + (name_prefix or "data") + ".topic", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='minLength')
                if data__topic_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".topic must be shorter than or equal to 255 characters", value=data__topic, name="" + (name_prefix or "data") + ".topic", definition={'type': 'string', 'minLength': 1, 'maxLength': 255}, rule='maxLength')
        if "report_time" in data_keys:
            data_keys.remove("report_time")
            data__reporttime = data["report_time"]
            if not isinstance(data__reporttime, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".report_time must be string", value=data__reporttime, name="" + (name_prefix or "data") + ".report_time", definition={'type': 'string', 'format': 'date-time'}, rule='type')
            if isinstance(data__reporttime, str):
                if not REGEX_PATTERNS["date-time_re_pattern"].match(data__reporttime):
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".report_time must be date-time", value=data__reporttime, name="" + (name_prefix or "data") + ".report_time", definition={'type': 'string', 'format': 'date-time'}, rule='format')
        if "version" in data_keys:
            data_keys.remove("version")
            data__version = data["version"]
            if not isinstance(data__version, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".version must be string", value=data__version, name="" + (name_prefix or "data") + ".version", definition={'type': 'string', 'maxLength': 32}, rule='type')
            if isinstance(data__version, str):
                data__version_len = len(data__version)
                if data__version_len > 32:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".version must be shorter than or equal to 32 characters", value=data__version, name="" + (name_prefix or "data") + ".version", definition={'type': 'string', 'maxLength': 32}, rule='maxLength')
        if "cell_name" in data_keys:
            data_keys.remove("cell_name")
            data__cellname = data["cell_name"]
            if not isinstance(data__cellname, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".cell_name must be string or null", value=data__cellname, name="" + (name_prefix or "data") + ".cell_name", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='type')
            if isinstance(data__cellname, str):
                data__cellname_len = len(data__cellname)
                if data__cellname_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".cell_name must be shorter than or equal to 255 characters", value=data__cellname, name="" + (name_prefix or "data") + ".cell_name", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='maxLength')
        if "disabled" in data_keys:
            data_keys.remove("disabled")
            data__disabled = data["disabled"]
            if not isinstance(data__disabled, (bool)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".disabled must be boolean", value=data__disabled, name="" + (name_prefix or "data") + ".disabled", definition={'type': 'boolean'}, rule='type')
        if "disabled_reason" in data_keys:
            data_keys.remove("disabled_reason")
            data__disabledreason = data["disabled_reason"]
            if not isinstance(data__disabledreason, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".disabled_reason must be string or null", value=data__disabledreason, name="" + (name_prefix or "data") + ".disabled_reason", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='type')
            if isinstance(data__disabledreason, str):
                data__disabledreason_len = len(data__disabledreason)
                if data__disabledreason_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".disabled_reason must be shorter than or equal to 255 characters", value=data__disabledreason, name="" + (name_prefix or "data") + ".disabled_reason", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='maxLength')
        if "building" in data_keys:
            data_keys.remove("building")
            data__building = data["building"]
            if not isinstance(data__building, (list, tuple, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".building must be array or null", value=data__building, name="" + (name_prefix or "data") + ".building", definition={'type': ['array', 'null'], 'items': {'type': 'string'}}, rule='type')
            data__building_is_list = isinstance(data__building, (list, tuple))
            if data__building_is_list:
                data__building_len = len(data__building)
                for data__building_x, data__building_item in enumerate(data__building):
                    if not isinstance(data__building_item, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".building[{data__building_x}]".format(**locals()) + " must be string", value=data__building_item, name="" + (name_prefix or "data") + ".building[{data__building_x}]".format(**locals()) + "", definition={'type': 'string'}, rule='type')
        if data_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must not contain "+str(data_keys)+" properties", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'ServiceStatus 1.1', 'type': 'object', 'properties': {'host': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'binary': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'topic': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'report_time': {'type': 'string', 'format': 'date-time'}, 'version': {'type': 'string', 'maxLength': 32}, 'cell_name': {'maxLength': 255, 'type': ['string', 'null']}, 'disabled': {'type': 'boolean'}, 'disabled_reason': {'maxLength': 255, 'type': ['string', 'null']}, 'building': {'type': ['array', 'null'], 'items': {'type': 'string'}}}, 'required': ['host', 'binary', 'topic', 'report_time', 'version'], 'additionalProperties': False, 'description': 'Heartbeat of one service on one host.'}, rule='additionalProperties')
    return data