"""The check of BuildAttempt-1.0.json, compiled by fastjsonschema 2.22.3.

Written by ``python -m rpc_schemas.write_schemas``; do not edit.
"""
# flake8: noqa
# ruff: noqa
SCHEMA_SHA256 = 'd5fef2c392479e41ffb31afab1d596e25ce650da255d015563cd3b8dae423e27'

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
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'BuildAttempt 1.0', 'type': 'object', 'properties': {'host': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'nodename': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'start': {'type': 'string', 'format': 'date-time'}, 'finish': {'type': 'string', 'format': 'date-time'}, 'result': {'type': 'string', 'enum': ['ok', 'failed']}, 'reason': {'maxLength': 65535, 'type': ['string', 'null']}}, 'required': ['host', 'nodename', 'start', 'finish', 'result'], 'additionalProperties': False, 'description': 'A build of an instance on one host: when it started and finished, whether it worked, and if not, why.'}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data__missing_keys = set(['host', 'nodename', 'start', 'finish', 'result']) - data.keys()
        if data__missing_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must contain " + (str(sorted(data__missing_keys)) + " properties"), value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'BuildAttempt 1.0', 'type': 'object', 'properties': {'host': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'nodename': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'start': {'type': 'string', 'format': 'date-time'}, 'finish': {'type': 'string', 'format': 'date-time'}, 'result': {'type': 'string', 'enum': ['ok', 'failed']}, 'reason': {'maxLength': 65535, 'type': ['string', 'null']}}, 'required': ['host', 'nodename', 'start', 'finish', 'result'], 'additionalProperties': False, 'description': 'A build of an instance on one host: when it started and finished, whether it worked, and if not, why.'}, rule='required')
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
        if "start" in data_keys:
            data_keys.remove("start")
            data__start = data["start"]
            if not isinstance(data__start, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".start must be string", value=data__start, name="" + (name_prefix or "data") + ".start", definition={'type': 'string', 'format': 'date-time'}, rule='type')
            if isinstance(data__start, str):
                if not REGEX_PATTERNS["date-time_re_pattern"].match(data__start):
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".start must be date-time", value=data__start, name="" + (name_prefix or "data") + ".start", definition={'type': 'string', 'format': 'date-time'}, rule='format')
        if "finish" in data_keys:
            data_keys.remove("finish")
            data__finish = data["finish"]
            if not isinstance(data__finish, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".finish must be string", value=data__finish, name="" + (name_prefix or "data") + ".finish", definition={'type': 'string', 'format': 'date-time'}, rule='type')
            if isinstance(data__finish, str):
                if not REGEX_PATTERNS["date-time_re_pattern"].match(data__finish):
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".finish must be date-time", value=data__finish, name="" + (name_prefix or "data") + ".finish", definition={'type': 'string', 'format': 'date-time'}, rule='format')
        if "result" in data_keys:
            data_keys.remove("result")
            data__result = data["result"]
            if not isinstance(data__result, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".result must be string", value=data__result, name="" + (name_prefix or "data") + ".result", definition={'type': 'string', 'enum': ['ok', 'failed']}, rule='type')
            if not (isinstance(data__result, str) and data__result == 'ok' or isinstance(data__result, str) and data__result == 'failed'):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".result must be one of ['ok', 'failed']", value=data__result, name="" + (name_prefix or "data") + ".result", definition={'type': 'string', 'enum': ['ok', 'failed']}, rule='enum')
        if "reason" in data_keys:
            data_keys.remove("reason")
            data__reason = data["reason"]
            if not isinstance(data__reason, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".reason must be string or null", value=data__reason, name="" + (name_prefix or "data") + ".reason", definition={'maxLength': 65535, 'type': ['string', 'null']}, rule='type')
            if isinstance(data__reason, str):
                data__reason_len = len(data__reason)
                if data__reason_len > 65535:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".reason must be shorter than or equal to 65535 characters", value=data__reason, name="" + (name_prefix or "data") + ".reason", definition={'maxLength': 65535, 'type': ['string', 'null']}, rule='maxLength')
        if data_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must not contain "+str(data_keys)+" properties", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'BuildAttempt 1.0', 'type': 'object', 'properties': {'host': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'nodename': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'start': {'type': 'string', 'format': 'date-time'}, 'finish': {'type': 'string', 'format': 'date-time'}, 'result': {'type': 'string', 'enum': ['ok', 'failed']}, 'reason': {'maxLength': 65535, 'type': ['string', 'null']}}, 'required': ['host', 'nodename', 'start', 'finish', 'result'], 'additionalProperties': False, 'description': 'A build of an instance on one host: when it started and finished, whether it worked, and if not, why.'}, rule='additionalProperties')
    return data