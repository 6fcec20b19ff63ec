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

"""The commands drop the log records no handler would print (OSC's root
logger at DEBUG made keystoneauth format every request and answer)."""

import io
import logging

import pytest

from osc_cascade.v1.common import drop_unprinted_records

KEYSTONEAUTH = 'keystoneauth.session'


@pytest.fixture
def root():
    """The root logger as OSC leaves it: DEBUG, its handlers choose; the
    loggers' state restored afterwards."""
    root = logging.getLogger()
    saved = root.level, list(root.handlers)
    root.handlers = []
    root.setLevel(logging.DEBUG)
    yield root
    root.handlers = saved[1]
    root.setLevel(saved[0])


def handler(level):
    h = logging.StreamHandler(io.StringIO())
    h.setLevel(level)
    return h


def printed(h):
    return h.stream.getvalue()


def test_without_debug_keystoneauth_formats_nothing(root):
    console = handler(logging.WARNING)
    root.addHandler(console)
    drop_unprinted_records()
    assert root.level == logging.WARNING
    assert not logging.getLogger(KEYSTONEAUTH).isEnabledFor(logging.DEBUG)
    logging.getLogger(KEYSTONEAUTH).warning('shown')
    assert printed(console) == 'shown\n'


def test_a_log_file_at_debug_keeps_every_record(root):
    root.addHandler(handler(logging.WARNING))
    log_file = handler(logging.DEBUG)
    root.addHandler(log_file)
    drop_unprinted_records()
    assert root.level == logging.DEBUG
    logging.getLogger(KEYSTONEAUTH).debug('REQ: curl')
    assert printed(log_file) == 'REQ: curl\n'


def test_a_handler_of_another_logger_counts(root):
    root.addHandler(handler(logging.WARNING))
    own = logging.getLogger('osc_cascade.test_log_levels')
    mine = handler(logging.INFO)
    own.addHandler(mine)
    try:
        drop_unprinted_records()
        assert root.level == logging.INFO
        own.info('kept')
        assert printed(mine) == 'kept\n'
    finally:
        own.removeHandler(mine)


def test_a_handler_without_a_level_prints_everything(root):
    root.addHandler(handler(logging.WARNING))
    root.addHandler(handler(logging.NOTSET))
    drop_unprinted_records()
    assert root.level == logging.DEBUG


def test_a_logger_with_a_level_of_its_own_keeps_it(root):
    root.addHandler(handler(logging.ERROR))
    chatty = logging.getLogger('osc_cascade.test_log_levels.chatty')
    chatty.setLevel(logging.INFO)
    try:
        drop_unprinted_records()
        assert root.level == logging.ERROR
        assert chatty.isEnabledFor(logging.INFO)
    finally:
        chatty.setLevel(logging.NOTSET)
