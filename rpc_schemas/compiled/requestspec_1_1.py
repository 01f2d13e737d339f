"""The check of RequestSpec-1.1.json, compiled by fastjsonschema 2.22.3.

Written by ``python -m rpc_schemas.write_schemas``; do not edit.
"""
# flake8: noqa
# ruff: noqa
SCHEMA_SHA256 = '8f73d608358b798eb2b1d5b039be84cdcf4ee84145e0eae867e01e5eca362410'

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
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'RequestSpec 1.1', 'type': 'object', 'properties': {'flavor': {'type': 'object', 'properties': {'cellplane.name': {'const': 'Flavor'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, 'project_id': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'user_id': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'num_instances': {'type': 'integer', 'minimum': 1}, 'image_properties': {'type': 'object', 'additionalProperties': {'type': 'string'}}, 'availability_zone': {'maxLength': 255, 'type': ['string', 'null']}, 'scheduler_hints': {'type': 'object', 'additionalProperties': {'type': 'array', 'items': {'type': 'string'}}}, 'instance_group': {'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'InstanceGroup'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, 'requested_destination': {'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'RequestedDestination'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, 'ignore_hosts': {'type': 'array', 'items': {'type': 'string'}}, 'retry': {'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'SchedulingRetry'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, 'requested_networks': {'enum': ['auto', 'none', None], 'type': ['string', 'null']}, 'image_ref': {'maxLength': 255, 'type': ['string', 'null']}}, 'required': ['flavor', 'project_id', 'user_id'], 'additionalProperties': False, 'description': 'What to place and under which constraints: one boot request.'}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data__missing_keys = set(['flavor', 'project_id', 'user_id']) - data.keys()
        if data__missing_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must contain " + (str(sorted(data__missing_keys)) + " properties"), value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'RequestSpec 1.1', 'type': 'object', 'properties': {'flavor': {'type': 'object', 'properties': {'cellplane.name': {'const': 'Flavor'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, 'project_id': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'user_id': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'num_instances': {'type': 'integer', 'minimum': 1}, 'image_properties': {'type': 'object', 'additionalProperties': {'type': 'string'}}, 'availability_zone': {'maxLength': 255, 'type': ['string', 'null']}, 'scheduler_hints': {'type': 'object', 'additionalProperties': {'type': 'array', 'items': {'type': 'string'}}}, 'instance_group': {'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'InstanceGroup'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, 'requested_destination': {'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'RequestedDestination'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, 'ignore_hosts': {'type': 'array', 'items': {'type': 'string'}}, 'retry': {'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'SchedulingRetry'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, 'requested_networks': {'enum': ['auto', 'none', None], 'type': ['string', 'null']}, 'image_ref': {'maxLength': 255, 'type': ['string', 'null']}}, 'required': ['flavor', 'project_id', 'user_id'], 'additionalProperties': False, 'description': 'What to place and under which constraints: one boot request.'}, rule='required')
        data_keys = set(data.keys())
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
        if "num_instances" in data_keys:
            data_keys.remove("num_instances")
            data__numinstances = data["num_instances"]
            if not isinstance(data__numinstances, (int)) and not (isinstance(data__numinstances, float) and data__numinstances.is_integer()) or isinstance(data__numinstances, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".num_instances must be integer", value=data__numinstances, name="" + (name_prefix or "data") + ".num_instances", definition={'type': 'integer', 'minimum': 1}, rule='type')
            if isinstance(data__numinstances, (int, float, Decimal)) and not isinstance(data__numinstances, bool):
                if data__numinstances < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".num_instances must be bigger than or equal to 1", value=data__numinstances, name="" + (name_prefix or "data") + ".num_instances", definition={'type': 'integer', 'minimum': 1}, rule='minimum')
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
        if "scheduler_hints" in data_keys:
            data_keys.remove("scheduler_hints")
            data__schedulerhints = data["scheduler_hints"]
            if not isinstance(data__schedulerhints, (dict)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".scheduler_hints must be object", value=data__schedulerhints, name="" + (name_prefix or "data") + ".scheduler_hints", definition={'type': 'object', 'additionalProperties': {'type': 'array', 'items': {'type': 'string'}}}, rule='type')
            data__schedulerhints_is_dict = isinstance(data__schedulerhints, dict)
            if data__schedulerhints_is_dict:
                data__schedulerhints_keys = set(data__schedulerhints.keys())
                for data__schedulerhints_key in data__schedulerhints_keys:
                    if data__schedulerhints_key not in []:
                        data__schedulerhints_value = data__schedulerhints.get(data__schedulerhints_key)
                        if not isinstance(data__schedulerhints_value, (list, tuple)):
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".scheduler_hints.{data__schedulerhints_key}".format(**locals()) + " must be array", value=data__schedulerhints_value, name="" + (name_prefix or "data") + ".scheduler_hints.{data__schedulerhints_key}".format(**locals()) + "", definition={'type': 'array', 'items': {'type': 'string'}}, rule='type')
                        data__schedulerhints_value_is_list = isinstance(data__schedulerhints_value, (list, tuple))
                        if data__schedulerhints_value_is_list:
                            data__schedulerhints_value_len = len(data__schedulerhints_value)
                            for data__schedulerhints_value_x, data__schedulerhints_value_item in enumerate(data__schedulerhints_value):
                                if not isinstance(data__schedulerhints_value_item, (str)):
                                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".scheduler_hints.{data__schedulerhints_key}[{data__schedulerhints_value_x}]".format(**locals()) + " must be string", value=data__schedulerhints_value_item, name="" + (name_prefix or "data") + ".scheduler_hints.{data__schedulerhints_key}[{data__schedulerhints_value_x}]".format(**locals()) + "", definition={'type': 'string'}, rule='type')
        if "instance_group" in data_keys:
            data_keys.remove("instance_group")
            data__instancegroup = data["instance_group"]
            if not isinstance(data__instancegroup, (dict, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".instance_group must be object or null", value=data__instancegroup, name="" + (name_prefix or "data") + ".instance_group", definition={'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'InstanceGroup'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, rule='type')
            data__instancegroup_is_dict = isinstance(data__instancegroup, dict)
            if data__instancegroup_is_dict:
                data__instancegroup__missing_keys = set(['cellplane.name', 'cellplane.version', 'cellplane.data']) - data__instancegroup.keys()
                if data__instancegroup__missing_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".instance_group must contain " + (str(sorted(data__instancegroup__missing_keys)) + " properties"), value=data__instancegroup, name="" + (name_prefix or "data") + ".instance_group", definition={'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'InstanceGroup'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, rule='required')
                data__instancegroup_keys = set(data__instancegroup.keys())
                if "cellplane.name" in data__instancegroup_keys:
                    data__instancegroup_keys.remove("cellplane.name")
                    data__instancegroup__cellplanename = data__instancegroup["cellplane.name"]
                    if not (isinstance(data__instancegroup__cellplanename, str) and data__instancegroup__cellplanename == 'InstanceGroup'):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".instance_group.cellplane.name must be same as const definition: InstanceGroup", value=data__instancegroup__cellplanename, name="" + (name_prefix or "data") + ".instance_group.cellplane.name", definition={'const': 'InstanceGroup'}, rule='const')
                if "cellplane.version" in data__instancegroup_keys:
                    data__instancegroup_keys.remove("cellplane.version")
                    data__instancegroup__cellplaneversion = data__instancegroup["cellplane.version"]
                    if not isinstance(data__instancegroup__cellplaneversion, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".instance_group.cellplane.version must be string", value=data__instancegroup__cellplaneversion, name="" + (name_prefix or "data") + ".instance_group.cellplane.version", definition={'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, rule='type')
                    if isinstance(data__instancegroup__cellplaneversion, str):
                        if not REGEX_PATTERNS['^[0-9]+\\.[0-9]+$'].search(data__instancegroup__cellplaneversion):
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".instance_group.cellplane.version must match pattern ^[0-9]+\\.[0-9]+$", value=data__instancegroup__cellplaneversion, name="" + (name_prefix or "data") + ".instance_group.cellplane.version", definition={'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, rule='pattern')
                if "cellplane.data" in data__instancegroup_keys:
                    data__instancegroup_keys.remove("cellplane.data")
                    data__instancegroup__cellplanedata = data__instancegroup["cellplane.data"]
                    if not isinstance(data__instancegroup__cellplanedata, (dict)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".instance_group.cellplane.data must be object", value=data__instancegroup__cellplanedata, name="" + (name_prefix or "data") + ".instance_group.cellplane.data", definition={'type': 'object'}, rule='type')
                if data__instancegroup_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".instance_group must not contain "+str(data__instancegroup_keys)+" properties", value=data__instancegroup, name="" + (name_prefix or "data") + ".instance_group", definition={'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'InstanceGroup'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, rule='additionalProperties')
        if "requested_destination" in data_keys:
            data_keys.remove("requested_destination")
            data__requesteddestination = data["requested_destination"]
            if not isinstance(data__requesteddestination, (dict, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".requested_destination must be object or null", value=data__requesteddestination, name="" + (name_prefix or "data") + ".requested_destination", definition={'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'RequestedDestination'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, rule='type')
            data__requesteddestination_is_dict = isinstance(data__requesteddestination, dict)
            if data__requesteddestination_is_dict:
                data__requesteddestination__missing_keys = set(['cellplane.name', 'cellplane.version', 'cellplane.data']) - data__requesteddestination.keys()
                if data__requesteddestination__missing_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".requested_destination must contain " + (str(sorted(data__requesteddestination__missing_keys)) + " properties"), value=data__requesteddestination, name="" + (name_prefix or "data") + ".requested_destination", definition={'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'RequestedDestination'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, rule='required')
                data__requesteddestination_keys = set(data__requesteddestination.keys())
                if "cellplane.name" in data__requesteddestination_keys:
                    data__requesteddestination_keys.remove("cellplane.name")
                    data__requesteddestination__cellplanename = data__requesteddestination["cellplane.name"]
                    if not (isinstance(data__requesteddestination__cellplanename, str) and data__requesteddestination__cellplanename == 'RequestedDestination'):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".requested_destination.cellplane.name must be same as const definition: RequestedDestination", value=data__requesteddestination__cellplanename, name="" + (name_prefix or "data") + ".requested_destination.cellplane.name", definition={'const': 'RequestedDestination'}, rule='const')
                if "cellplane.version" in data__requesteddestination_keys:
                    data__requesteddestination_keys.remove("cellplane.version")
                    data__requesteddestination__cellplaneversion = data__requesteddestination["cellplane.version"]
                    if not isinstance(data__requesteddestination__cellplaneversion, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".requested_destination.cellplane.version must be string", value=data__requesteddestination__cellplaneversion, name="" + (name_prefix or "data") + ".requested_destination.cellplane.version", definition={'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, rule='type')
                    if isinstance(data__requesteddestination__cellplaneversion, str):
                        if not REGEX_PATTERNS['^[0-9]+\\.[0-9]+$'].search(data__requesteddestination__cellplaneversion):
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".requested_destination.cellplane.version must match pattern ^[0-9]+\\.[0-9]+$", value=data__requesteddestination__cellplaneversion, name="" + (name_prefix or "data") + ".requested_destination.cellplane.version", definition={'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, rule='pattern')
                if "cellplane.data" in data__requesteddestination_keys:
                    data__requesteddestination_keys.remove("cellplane.data")
                    data__requesteddestination__cellplanedata = data__requesteddestination["cellplane.data"]
                    if not isinstance(data__requesteddestination__cellplanedata, (dict)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".requested_destination.cellplane.data must be object", value=data__requesteddestination__cellplanedata, name="" + (name_prefix or "data") + ".requested_destination.cellplane.data", definition={'type': 'object'}, rule='type')
                if data__requesteddestination_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".requested_destination must not contain "+str(data__requesteddestination_keys)+" properties", value=data__requesteddestination, name="" + (name_prefix or "data") + ".requested_destination", definition={'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'RequestedDestination'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, rule='additionalProperties')
        if "ignore_hosts" in data_keys:
            data_keys.remove("ignore_hosts")
            data__ignorehosts = data["ignore_hosts"]
            if not isinstance(data__ignorehosts, (list, tuple)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".ignore_hosts must be array", value=data__ignorehosts, name="" + (name_prefix or "data") + ".ignore_hosts", definition={'type': 'array', 'items': {'type': 'string'}}, rule='type')
            data__ignorehosts_is_list = isinstance(data__ignorehosts, (list, tuple))
            if data__ignorehosts_is_list:
                data__ignorehosts_len = len(data__ignorehosts)
                for data__ignorehosts_x, data__ignorehosts_item in enumerate(data__ignorehosts):
                    if not isinstance(data__ignorehosts_item, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".ignore_hosts[{data__ignorehosts_x}]".format(**locals()) + " must be string", value=data__ignorehosts_item, name="" + (name_prefix or "data") + ".ignore_hosts[{data__ignorehosts_x}]".format(**locals()) + "", definition={'type': 'string'}, rule='type')
        if "retry" in data_keys:
            data_keys.remove("retry")
            data__retry = data["retry"]
            if not isinstance(data__retry, (dict, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".retry must be object or null", value=data__retry, name="" + (name_prefix or "data") + ".retry", definition={'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'SchedulingRetry'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, rule='type')
            data__retry_is_dict = isinstance(data__retry, dict)
            if data__retry_is_dict:
                data__retry__missing_keys = set(['cellplane.name', 'cellplane.version', 'cellplane.data']) - data__retry.keys()
                if data__retry__missing_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".retry must contain " + (str(sorted(data__retry__missing_keys)) + " properties"), value=data__retry, name="" + (name_prefix or "data") + ".retry", definition={'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'SchedulingRetry'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, rule='required')
                data__retry_keys = set(data__retry.keys())
                if "cellplane.name" in data__retry_keys:
                    data__retry_keys.remove("cellplane.name")
                    data__retry__cellplanename = data__retry["cellplane.name"]
                    if not (isinstance(data__retry__cellplanename, str) and data__retry__cellplanename == 'SchedulingRetry'):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".retry.cellplane.name must be same as const definition: SchedulingRetry", value=data__retry__cellplanename, name="" + (name_prefix or "data") + ".retry.cellplane.name", definition={'const': 'SchedulingRetry'}, rule='const')
                if "cellplane.version" in data__retry_keys:
                    data__retry_keys.remove("cellplane.version")
                    data__retry__cellplaneversion = data__retry["cellplane.version"]
                    if not isinstance(data__retry__cellplaneversion, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".retry.cellplane.version must be string", value=data__retry__cellplaneversion, name="" + (name_prefix or "data") + ".retry.cellplane.version", definition={'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, rule='type')
                    if isinstance(data__retry__cellplaneversion, str):
                        if not REGEX_PATTERNS['^[0-9]+\\.[0-9]+$'].search(data__retry__cellplaneversion):
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".retry.cellplane.version must match pattern ^[0-9]+\\.[0-9]+$", value=data__retry__cellplaneversion, name="" + (name_prefix or "data") + ".retry.cellplane.version", definition={'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, rule='pattern')
                if "cellplane.data" in data__retry_keys:
                    data__retry_keys.remove("cellplane.data")
                    data__retry__cellplanedata = data__retry["cellplane.data"]
                    if not isinstance(data__retry__cellplanedata, (dict)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".retry.cellplane.data must be object", value=data__retry__cellplanedata, name="" + (name_prefix or "data") + ".retry.cellplane.data", definition={'type': 'object'}, rule='type')
                if data__retry_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".retry must not contain "+str(data__retry_keys)+" properties", value=data__retry, name="" + (name_prefix or "data") + ".retry", definition={'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'SchedulingRetry'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, rule='additionalProperties')
        if "requested_networks" in data_keys:
            data_keys.remove("requested_networks")
            data__requestednetworks = data["requested_networks"]
            if not isinstance(data__requestednetworks, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".requested_networks must be string or null", value=data__requestednetworks, name="" + (name_prefix or "data") + ".requested_networks", definition={'enum': ['auto', 'none', None], 'type': ['string', 'null']}, rule='type')
            if not (isinstance(data__requestednetworks, str) and data__requestednetworks == 'auto' or isinstance(data__requestednetworks, str) and data__requestednetworks == 'none' or data__requestednetworks is None):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".requested_networks must be one of ['auto', 'none', None]", value=data__requestednetworks, name="" + (name_prefix or "data") + ".requested_networks", definition={'enum': ['auto', 'none', None], 'type': ['string', 'null']}, rule='enum')
        if "image_ref" in data_keys:
            data_keys.remove("image_ref")
            data__imageref = data["image_ref"]
            if not isinstance(data__imageref, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".image_ref must be string or null", value=data__imageref, name="" + (name_prefix or "data") + ".image_ref", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='type')
            if isinstance(data__imageref, str):
                data__imageref_len = len(data__imageref)
                if data__imageref_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".image_ref must be shorter than or equal to 255 characters", value=data__imageref, name="" + (name_prefix or "data") + ".image_ref", definition={'maxLength': 255, 'type': ['string', 'null']}, rule='maxLength')
        if data_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must not contain "+str(data_keys)+" properties", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'RequestSpec 1.1', 'type': 'object', 'properties': {'flavor': {'type': 'object', 'properties': {'cellplane.name': {'const': 'Flavor'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, 'project_id': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'user_id': {'type': 'string', 'minLength': 1, 'maxLength': 255}, 'num_instances': {'type': 'integer', 'minimum': 1}, 'image_properties': {'type': 'object', 'additionalProperties': {'type': 'string'}}, 'availability_zone': {'maxLength': 255, 'type': ['string', 'null']}, 'scheduler_hints': {'type': 'object', 'additionalProperties': {'type': 'array', 'items': {'type': 'string'}}}, 'instance_group': {'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'InstanceGroup'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, 'requested_destination': {'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'RequestedDestination'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, 'ignore_hosts': {'type': 'array', 'items': {'type': 'string'}}, 'retry': {'type': ['object', 'null'], 'properties': {'cellplane.name': {'const': 'SchedulingRetry'}, 'cellplane.version': {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}, 'cellplane.data': {'type': 'object'}}, 'required': ['cellplane.name', 'cellplane.version', 'cellplane.data'], 'additionalProperties': False}, 'requested_networks': {'enum': ['auto', 'none', None], 'type': ['string', 'null']}, 'image_ref': {'maxLength': 255, 'type': ['string', 'null']}}, 'required': ['flavor', 'project_id', 'user_id'], 'additionalProperties': False, 'description': 'What to place and under which constraints: one boot request.'}, rule='additionalProperties')
    return data