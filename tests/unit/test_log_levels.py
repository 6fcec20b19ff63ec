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


class Root:
    """The root logger as OSC leaves it: DEBUG, and the handlers the test
    adds (``add``) are the only ones ``drop`` lets count.

    pytest's logging plugin (on unless ``-p no:logging``) puts capture
    handlers of its own, at no level, on the root logger around each
    phase of a test, after the fixtures are set up: counted, they keep
    the root at DEBUG. Emptying ``root.handlers`` in the fixture and
    putting the list back afterwards missed them, and put back the setup
    phase's handlers, which then stayed on the root for later tests."""

    def __init__(self):
        self.logger = logging.getLogger()
        self.added = []

    def add(self, h):
        self.logger.addHandler(h)
        self.added.append(h)
        return h

    def drop(self):
        """drop_unprinted_records() as if only the test's handlers were on
        the root logger; any other (pytest's, an earlier test's) is taken
        off for the call and put back."""
        others = [h for h in self.logger.handlers if h not in self.added]
        for h in others:
            self.logger.removeHandler(h)
        try:
            drop_unprinted_records()
        finally:
            for h in others:
                self.logger.addHandler(h)

    @property
    def level(self):
        return self.logger.level


@pytest.fixture
def root():
    """The root logger at DEBUG; its level restored and the test's
    handlers removed afterwards."""
    root = Root()
    saved = root.logger.level
    root.logger.setLevel(logging.DEBUG)
    yield root
    for h in root.added:
        root.logger.removeHandler(h)
    root.logger.setLevel(saved)


def handler(level):
    h = logging.StreamHandler(io.StringIO())
    h.setLevel(level)
    return h


def printed(h):
    return h.stream.getvalue()


def test_without_debug_keystoneauth_formats_nothing(root):
    console = handler(logging.WARNING)
    root.add(console)
    root.drop()
    assert root.level == logging.WARNING
    assert not logging.getLogger(KEYSTONEAUTH).isEnabledFor(logging.DEBUG)
    logging.getLogger(KEYSTONEAUTH).warning('shown')
    assert printed(console) == 'shown\n'


def test_a_log_file_at_debug_keeps_every_record(root):
    root.add(handler(logging.WARNING))
    log_file = handler(logging.DEBUG)
    root.add(log_file)
    root.drop()
    assert root.level == logging.DEBUG
    logging.getLogger(KEYSTONEAUTH).debug('REQ: curl')
    assert printed(log_file) == 'REQ: curl\n'


def test_a_handler_of_another_logger_counts(root):
    root.add(handler(logging.WARNING))
    own = logging.getLogger('osc_cascade.test_log_levels')
    mine = handler(logging.INFO)
    own.addHandler(mine)
    try:
        root.drop()
        assert root.level == logging.INFO
        own.info('kept')
        assert printed(mine) == 'kept\n'
    finally:
        own.removeHandler(mine)


def test_a_handler_without_a_level_prints_everything(root):
    root.add(handler(logging.WARNING))
    root.add(handler(logging.NOTSET))
    root.drop()
    assert root.level == logging.DEBUG


def test_a_logger_with_a_level_of_its_own_keeps_it(root):
    root.add(handler(logging.ERROR))
    chatty = logging.getLogger('osc_cascade.test_log_levels.chatty')
    chatty.setLevel(logging.INFO)
    try:
        root.drop()
        assert root.level == logging.ERROR
        assert chatty.isEnabledFor(logging.INFO)
    finally:
        chatty.setLevel(logging.NOTSET)
