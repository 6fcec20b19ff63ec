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

"""The reaper's options: an oslo.config file (``[reaper]``, plus
oslo.messaging's own ``[DEFAULT] transport_url`` and
``[oslo_messaging_notifications]``) and a few command-line options."""

from __future__ import annotations

from collections.abc import Sequence

from oslo_config import cfg

GROUP = 'reaper'
PROJECT = 'osc-cascade-reaper'

OPTS = [
    cfg.StrOpt(
        'cloud',
        help='The cloud of clouds.yaml to use (admin credentials that see '
        'every domain); default: OS_CLOUD, else clouds.yaml\'s only one.',
    ),
    cfg.IntOpt(
        'grace_period',
        default=300,
        min=0,
        help='Seconds to wait after a project is deleted before purging '
        'what it left: at least the services\' token cache time, so that '
        'what cached tokens still create is caught in the same pass. The '
        'quotas a cascade left frozen are released only after it, by a '
        'purge that finds nothing left.',
    ),
    cfg.IntOpt(
        'sweep_interval',
        default=3600,
        min=0,
        help='Seconds between two full orphan sweeps (the first one at '
        'start); 0 turns the sweep off.',
    ),
    cfg.BoolOpt(
        'dry_run',
        default=False,
        help='Only log what would be deleted.',
    ),
    cfg.BoolOpt(
        'force_stuck',
        default=False,
        help='Force what its service will not delete from the state it is '
        'in (a volume stuck in error_deleting, attaching, ...), as '
        '--force-stuck does: reset by the admin\'s own actions, only what '
        'the deleted project owned and nothing else uses. Off: such a '
        'resource is logged as stuck and left, and tried again.',
    ),
    cfg.IntOpt(
        'parallel',
        default=4,
        min=1,
        help='API calls in flight at once during a purge, and lists at '
        'once during its discovery (and as many calls per resource that '
        'its kinds make, a stack\'s resources or a container\'s HEAD).',
    ),
    cfg.FloatOpt(
        'rate_limit',
        default=0.0,
        min=0.0,
        help='At most this many API calls per second to each service '
        '(0: no limit). A service\'s rate_limit in clouds.yaml, if '
        'lower, wins.',
    ),
    cfg.IntOpt(
        'step_timeout',
        default=600,
        min=1,
        help='Seconds one delete (with its retries and its wait until the '
        'resource is gone) may take before it counts as failed.',
    ),
    cfg.IntOpt(
        'retry_delay',
        default=60,
        min=1,
        help='Seconds before a failed purge is tried again; doubles at '
        'each failure up to retry_max_delay. A failed purge is never '
        'dropped.',
    ),
    cfg.IntOpt(
        'retry_max_delay',
        default=3600,
        min=1,
        help='The longest wait between two tries of a failed purge.',
    ),
    cfg.IntOpt(
        'lock_retry_delay',
        default=60,
        min=1,
        help='Seconds before a project that another actor holds (another '
        'reaper, a cascade) is tried again.',
    ),
    cfg.IntOpt(
        'batch_size',
        default=50,
        min=1,
        help='At most this many deleted projects purged in one pass (one '
        'discovery for all of them).',
    ),
    cfg.StrOpt(
        'coordination_url',
        default='file:///var/lib/osc-cascade-reaper/locks',
        help='tooz backend of the per-project locks: the cloud\'s MySQL '
        'or MariaDB (mysql://..., through tooz\'s MySQL driver and its '
        'GET_LOCK; not SQLAlchemy\'s mysql+pymysql://), etcd '
        '(etcd3+http://...) or Redis (redis://...) when several reapers '
        'run; file:// only when one reaper runs on one host.',
    ),
    cfg.StrOpt(
        'listener_pool',
        default=PROJECT,
        help='The oslo.messaging listener pool: every pool gets its own '
        'copy of each notification, and the reapers of one pool share '
        'them.',
    ),
    cfg.StrOpt(
        'exchange',
        default='keystone',
        help='The exchange Keystone notifies on (its control_exchange).',
    ),
    cfg.ListOpt(
        'topics',
        default=['notifications'],
        help='The topics Keystone notifies on ([oslo_messaging_'
        'notifications] topics in keystone.conf).',
    ),
    cfg.IntOpt(
        'shutdown_timeout',
        default=60,
        min=0,
        help='Seconds a SIGTERM waits for a purge under way to stop (the '
        'calls in flight finish) before it is abandoned; the listener\'s '
        'stop, up to 5 s, runs meanwhile.',
    ),
    cfg.BoolOpt(
        'debug',
        default=False,
        help='Log at DEBUG level.',
    ),
]

CLI_OPTS = [
    cfg.StrOpt(
        'os-cloud',
        dest='os_cloud',
        help='The cloud of clouds.yaml (overrides [reaper] cloud).',
    ),
    cfg.BoolOpt(
        'dry-run',
        dest='cli_dry_run',
        default=False,
        help='Only log what would be deleted (same as [reaper] dry_run).',
    ),
]


def register(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
    conf.register_cli_opts(CLI_OPTS)


def load(argv: Sequence[str] | None = None) -> cfg.ConfigOpts:
    """The options, from the command line and the config files
    (``--config-file``; by default /etc/osc-cascade-reaper/
    osc-cascade-reaper.conf if it exists)."""
    conf = cfg.ConfigOpts()
    register(conf)
    conf(list(argv or []), project=PROJECT)
    return conf


def cloud(conf: cfg.ConfigOpts) -> str | None:
    return conf.os_cloud or conf.reaper.cloud


def dry_run(conf: cfg.ConfigOpts) -> bool:
    return bool(conf.cli_dry_run or conf.reaper.dry_run)


def list_opts() -> list[tuple[str, list[cfg.Opt]]]:
    """For oslo-config-generator."""
    return [(GROUP, OPTS)]
