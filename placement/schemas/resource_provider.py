"""Request bodies and query strings of /resource_providers, per microversion."""
import copy

POST_RESOURCE_PROVIDER_SCHEMA = {
    'type': 'object',
    'properties': {
        'name': {'type': 'string', 'maxLength': 200},
        'uuid': {'type': 'string', 'format': 'uuid'},
    },
    'required': ['name'],
    'additionalProperties': False,
}
PUT_RESOURCE_PROVIDER_SCHEMA = copy.deepcopy(POST_RESOURCE_PROVIDER_SCHEMA)
PUT_RESOURCE_PROVIDER_SCHEMA['properties'].pop('uuid')

# 1.14: nested providers.
POST_RP_SCHEMA_V1_14 = copy.deepcopy(POST_RESOURCE_PROVIDER_SCHEMA)
POST_RP_SCHEMA_V1_14['properties']['parent_provider_uuid'] = {
    'anyOf': [{'type': 'string', 'format': 'uuid'}, {'type': 'null'}],
}
PUT_RP_SCHEMA_V1_14 = copy.deepcopy(POST_RP_SCHEMA_V1_14)
PUT_RP_SCHEMA_V1_14['properties'].pop('uuid')

GET_RPS_SCHEMA_1_0 = {
    'type': 'object',
    'properties': {
        'name': {'type': 'string'},
        'uuid': {'type': 'string', 'format': 'uuid'},
    },
    'additionalProperties': False,
}
GET_RPS_SCHEMA_1_3 = copy.deepcopy(GET_RPS_SCHEMA_1_0)
GET_RPS_SCHEMA_1_3['properties']['member_of'] = {'type': 'string'}
GET_RPS_SCHEMA_1_4 = copy.deepcopy(GET_RPS_SCHEMA_1_3)
GET_RPS_SCHEMA_1_4['properties']['resources'] = {'type': 'string'}
GET_RPS_SCHEMA_1_14 = copy.deepcopy(GET_RPS_SCHEMA_1_4)
GET_RPS_SCHEMA_1_14['properties']['in_tree'] = {'type': 'string', 'format': 'uuid'}
GET_RPS_SCHEMA_1_18 = copy.deepcopy(GET_RPS_SCHEMA_1_14)
GET_RPS_SCHEMA_1_18['properties']['required'] = {'type': 'string'}


def list_schema(mv):
    if mv >= (1, 18):
        return GET_RPS_SCHEMA_1_18
    if mv >= (1, 14):
        return GET_RPS_SCHEMA_1_14
    if mv >= (1, 4):
        return GET_RPS_SCHEMA_1_4
    if mv >= (1, 3):
        return GET_RPS_SCHEMA_1_3
    return GET_RPS_SCHEMA_1_0
