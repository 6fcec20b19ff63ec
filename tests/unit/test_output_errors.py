#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.

"""A refused call is one line that says what the service said, once."""

from keystoneauth1 import exceptions as ks_exc
from openstack import exceptions as sdk_exc
import pytest
import requests

from osc_cascade.engine.errors import CascadeError, describe
from osc_cascade.v1.common import engine_errors

KEYSTONE = (
    '{"error": {"code": 403, "message": "You are not authorized to '
    'perform the requested action: identity:list_projects.", '
    '"title": "Forbidden"}}'
)
GLANCE = (
    '<html>\n <head>\n  <title>403 Forbidden</title>\n </head>\n <body>\n'
    '  <h1>403 Forbidden</h1>\n  Image x is protected and cannot be '
    'deleted.<br /><br />\n </body>\n</html>'
)
WORDS = {
    KEYSTONE: 'You are not authorized to perform the requested action: '
    'identity:list_projects.',
    GLANCE: 'Image x is protected and cannot be deleted.',
}


def response(body, content_type):
    r = requests.Response()
    r.status_code, r.reason = 403, 'Forbidden'
    r._content = body.encode()
    r.headers['content-type'] = content_type
    r.headers['x-openstack-request-id'] = 'req-1'
    r.url = 'http://keystone.test/v3/projects'
    r.request = requests.Request('GET', r.url).prepare()
    return r


def sdk_error(body, content_type):
    try:
        sdk_exc.raise_from_response(response(body, content_type))
    except sdk_exc.HttpException as exc:
        return exc
    raise AssertionError('no error')


@pytest.mark.parametrize(
    ('body', 'content_type'),
    [(KEYSTONE, 'application/json'), (GLANCE, 'text/html')],
)
@pytest.mark.parametrize('make', ['sdk', 'keystoneauth'])
def test_a_403_says_the_services_words_once_on_one_line(
    body, content_type, make
):
    exc = (
        sdk_error(body, content_type)
        if make == 'sdk'
        else ks_exc.from_response(
            response(body, content_type), 'GET', 'http://keystone.test'
        )
    )
    text = describe('listing projects', exc, needs='it needs the admin role')
    assert text == (
        'listing projects was refused (HTTP 403): it needs the admin role. '
        + WORDS[body]
    )
    assert text.count('403') == 1 and '\n' not in text


def test_a_json_body_that_the_client_did_not_read_gives_its_message():
    exc = ks_exc.from_response(
        response('{"error": {"message": "Policy says no"}}', 'text/plain'),
        'GET',
        'http://keystone.test',
    )
    assert describe('x', exc).endswith(
        'it needs the admin role. Policy says no'
    )


def test_an_engine_error_is_one_line_for_osc():
    from osc_lib import exceptions

    with pytest.raises(exceptions.CommandError) as err:
        with engine_errors():
            raise CascadeError('first line\n  second line')
    assert str(err.value) == 'first line second line'
