"""The check of InstanceGroup-1.1.json, compiled by fastjsonschema 2.22.3.

Written by ``python -m rpc_schemas.write_schemas``; do not edit.
"""
# flake8: noqa
# ruff: noqa
SCHEMA_SHA256 = '1f5281097aa832f22a4c364d0f4018e41b103e8dc1ef351db77fe1678a08fabe'

VERSION = "2.22.3"
from decimal import Decimal
from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException


NoneType = type(None)

def validate(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (dict)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'InstanceGroup 1.1', 'type': 'object', 'properties': {'uuid': {'type': 'string', 'minLength': 1, 'maxLength': 36}, 'policy': {'type': 'string', 'enum': ['affinity', 'anti-affinity']}, 'members': {'type': 'array', 'items': {'type': 'string'}}, 'hosts': {'type': 'array', 'items': {'type': 'string'}}, 'level': {'minLength': 1, 'maxLength': 255, 'type': ['string', 'null']}, 'soft': {'type': 'boolean'}, 'max_per_domain': {'type': 'integer', 'minimum': 1}, 'name': {'maxLength': 255, 'type': ['string', 'null']}, 'domains': {'type': 'array', 'items': {'type': 'string'}}}, 'required': ['uuid', 'policy'], 'additionalProperties': False, 'description': 'A server group: its policy, the failure-domain level the policy applies at, its members and the domains they held, as known when the request was sent.'}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data__missing_keys = set(['uuid', 'policy']) - data.keys()
        if data__missing_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must contain " + (str(sorted(data__missing_keys)) + " properties"), value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'InstanceGroup 1.1', 'type': 'object', 'properties': {'uuid': {'type': 'string', 'minLength': 1, 'maxLength': 36}, 'policy': {'type': 'string', 'enum': ['affinity', 'anti-affinity']}, 'members': {'type': 'array', 'items': {'type': 'string'}}, 'hosts': {'type': 'array', 'items': {'type': 'string'}}, 'level': {'minLength': 1, 'maxLength': 255, 'type': ['string', 'null']}, 'soft': {'type': 'boolean'}, 'max_per_domain': {'type': 'integer', 'minimum': 1}, 'name': {'maxLength': 255, 'type': ['string', 'null']}, 'domains': {'type': 'array', 'items': {'type': 'string'}}}, 'required': ['uuid', 'policy'], 'additionalProperties': False, 'description': 'A server group: its policy, the failure-domain level the policy applies at, its members and the domains they held, as known when the request was sent.'}, rule='required')
        data_keys = set(data.keys())
        if "uuid" in data_keys:
            data_keys.remove("uuid")
            data__uuid = data["uuid"]
            if not isinstance(data__uuid, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".uuid must be string", value=data__uuid, name="" + (name_prefix or "data") + ".uuid", definition={'type': 'string', 'minLength': 1, 'maxLength': 36}, rule='type')
            if isinstance(data__uuid, str):
                data__uuid_len = len(data__uuid)
                if data__uuid_len < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".uuid must be longer than or equal to 1 characters", value=data__uuid, name="" + (name_prefix or "data") + ".uuid", definition={'type': 'string', 'minLength': 1, 'maxLength': 36}, rule='minLength')
                if data__uuid_len > 36:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".uuid must be shorter than or equal to 36 characters", value=data__uuid, name="" + (name_prefix or "data") + ".uuid", definition={'type': 'string', 'minLength': 1, 'maxLength': 36}, rule='maxLength')
        if "policy" in data_keys:
            data_keys.remove("policy")
            data__policy = data["policy"]
            if not isinstance(data__policy, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".policy must be string", value=data__policy, name="" + (name_prefix or "data") + ".policy", definition={'type': 'string', 'enum': ['affinity', 'anti-affinity']}, rule='type')
            if not (isinstance(data__policy, str) and data__policy == 'affinity' or isinstance(data__policy, str) and data__policy == 'anti-affinity'):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".policy must be one of ['affinity', 'anti-affinity']", value=data__policy, name="" + (name_prefix or "data") + ".policy", definition={'type': 'string', 'enum': ['affinity', 'anti-affinity']}, rule='enum')
        if "members" in data_keys:
            data_keys.remove("members")
            data__members = data["members"]
            if not isinstance(data__members, (list, tuple)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".members must be array", value=data__members, name="" + (name_prefix or "data") + ".members", definition={'type': 'array', 'items': {'type': 'string'}}, rule='type')
            data__members_is_list = isinstance(data__members, (list, tuple))
            if data__members_is_list:
                data__members_len = len(data__members)
                for data__members_x, data__members_item in enumerate(data__members):
                    if not isinstance(data__members_item, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".members[{data__members_x}]".format(**locals()) + " must be string", value=data__members_item, name="" + (name_prefix or "data") + ".members[{data__members_x}]".format(**locals()) + "", definition={'type': 'string'}, rule='type')
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
        if "level" in data_keys:
            data_keys.remove("level")
            data__level = data["level"]
            if not isinstance(data__level, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".level must be string or null", value=data__level, name="" + (name_prefix or "data") + ".level", definition={'minLength': 1, 'maxLength': 255, 'type': ['string', 'null']}, rule='type')
            if isinstance(data__level, str):
                data__level_len = len(data__level)
                if data__level_len < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".level must be longer than or equal to 1 characters", value=data__level, name="" + (name_prefix or "data") + ".level", definition={'minLength': 1, 'maxLength': 255, 'type': ['string', 'null']}, rule='minLength')
                if data__level_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".level must be shorter than or equal to 255 characters", value=data__level, name="" + (name_prefix or "data") + ".level", definition={'minLength': 1, 'maxLength': 255, 'type': ['string', 'null']}, rule='maxLength')
        if "soft" in data_keys:
            data_keys.remove("soft")
            data__soft = data["soft"]
            if not isinstance(data__soft, (bool)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".soft must be boolean", value=data__soft, name="" + (name_prefix or "data") + ".soft", definition={'type': 'boolean'}, rule='type')
        if "max_per_domain" in data_keys:
            data_keys.remove("max_per_domain")
            data__maxperdomain = data["max_per_domain"]
            if not isinstance(data__maxperdomain, (int)) and not (isinstance(data__maxperdomain, float) and data__maxperdomain.is_integer()) or isinstance(data__maxperdomain, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".max_per_domain must be integer", value=data__maxperdomain, name="" + (name_prefix or "data") + ".max_per_domain", definition={'type': 'integer', 'minimum': 1}, rule='type')
            if isinstance(data__maxperdomain, (int, float, Decimal)) and not isinstance(data__maxperdomain, bool):
                if data__maxperdomain < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".max_per_domain must be bigger than or equal to 1", value=data__maxperdomain, name="" + (name_prefix or "data") + ".max_per_domain", definition={'type': 'integer', 'minimum': 1}, rule='minimum')
        if "name" in data_keys:
            data_keys.remove("name")
            data__name = data["name"]
            if not isinstance(data__name, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".name must be string or null", value=data__name, name="" + (name_prefix or "data") + ".name", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='type')
            if isinstance(data__name, str):
                data__name_len = len(data__name)
                if data__name_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".name must be shorter than or equal to 255 characters", value=data__name, name="" + (name_prefix or "data") + ".name", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='maxLength')
        if "domains" in data_keys:
            data_keys.remove("domains")
            data__domains = data["domains"]
            if not isinstance(data__domains, (list, tuple)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".domains must be array", value=data__domains, name="" + (name_prefix or "data") + ".domains", definition={'type': 'array', 'items': {'type': 'string'}}, rule='type')
            data__domains_is_list = isinstance(data__domains, (list, tuple))
            if data__domains_is_list:
                data__domains_len = len(data__domains)
                for data__domains_x, data__domains_item in enumerate(data__domains):
                    if not isinstance(data__domains_item, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".domains[{data__domains_x}]".format(**locals()) + " must be string", value=data__domains_item, name="" + (name_prefix or "data") + ".domains[{data__domains_x}]".format(**locals()) + "", definition={'type': 'string'}, rule='type')
        if data_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must not contain "+str(data_keys)+" properties", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'InstanceGroup 1.1', 'type': 'object', 'properties': {'uuid': {'type': 'string', 'minLength': 1, 'maxLength': 36}, 'policy': {'type': 'string', 'enum': ['affinity', 'anti-affinity']}, 'members': {'type': 'array', 'items': {'type': 'string'}}, 'hosts': {'type': 'array', 'items': {'type': 'string'}}, 'level': {'minLength': 1, 'maxLength': 255, 'type': ['string', 'null']}, 'soft': {'type': 'boolean'}, 'max_per_domain': {'type': 'integer', 'minimum': 1}, 'name': {'maxLength': 255, 'type': ['string', 'null']}, 'domains': {'type': 'array', 'items': {'type': 'string'}}}, 'required': ['uuid', 'policy'], 'additionalProperties': False, 'description': 'A server group: its policy, the failure-domain level the policy applies at, its members and the domains they held, as known when the request was sent.'}, rule='additionalProperties')
    return data