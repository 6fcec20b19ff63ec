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

"""state.json: the chosen services, what was initialised, readiness."""

import json
import threading

from .paths import STATE_FILE
from .util import write

_state_lock = threading.Lock()


def load_state():
    try:
        with open(STATE_FILE) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def update_state(**kw):
    with _state_lock:
        state = load_state()
        for key, value in kw.items():
            if isinstance(value, dict) and isinstance(state.get(key), dict):
                state[key].update(value)
            else:
                state[key] = value
        write(STATE_FILE, json.dumps(state, indent=1, sort_keys=True) + '\n')


def initialised(step):
    return load_state().get('initialised', {}).get(step, False)


def mark_initialised(step):
    update_state(initialised={step: True})
