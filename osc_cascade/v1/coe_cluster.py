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

"""``openstack coe cluster delete --force-delete``: a cliff hook on
python-magnumclient's command, so that a Magnum user finds the force path
where they look for it (``cluster ...`` is Senlin's namespace in OSC).

With ``--force-delete`` the hook runs ``openstack cluster force-delete
<cluster>...`` with that command's defaults, on Magnum's clusters alone:
the normal delete first, given 5 minutes, then the Heat stack abandoned
and a manifest written of what it left; nothing left behind is deleted.
It asks first, on a terminal only. magnumclient's own ``take_action`` is
then handed no cluster. The force path's other options (``--dry-run``,
``--delete-leftovers``, ``--grace``...) stay that command's.

Not ``--force``: a hook's options are added before the command's own, and
cliff refuses an option all of whose names are taken, so a ``--force`` of
magnumclient's one day would break every ``coe cluster delete``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cliff import hooks
from osc_lib import exceptions

from osc_cascade.v1.cluster import ForceDeleteCluster
from osc_cascade.v1.common import hand_to_osc

FORCE_DELETE = 'cluster force-delete'


class MagnumForceDelete(ForceDeleteCluster):
    """``cluster force-delete``, looking for the clusters in Magnum alone:
    a name that only a Sahara cluster has is no cluster of ``coe``."""

    def services(self, conn: Any, parsed_args: argparse.Namespace) -> list:
        from osc_cascade.workflows import clusters

        magnum = clusters.MagnumClusters()
        if not conn.has_service(magnum.service_type):
            raise exceptions.CommandError(
                'Magnum (container-infra) is not in the catalog.'
            )
        return [magnum]


class CoeClusterDeleteForce(hooks.CommandHook):
    """Adds ``--force-delete`` to ``openstack coe cluster delete``."""

    def get_parser(
        self, parser: argparse.ArgumentParser
    ) -> argparse.ArgumentParser:
        group = parser.add_argument_group('force delete (osc-cascade)')
        group.add_argument(
            '--force-delete',
            action='store_true',
            help='If the delete takes over 5m, abandon the Heat stack',
        )
        return parser

    def get_epilog(self) -> str:
        return (
            'With --force-delete (admin), a cluster whose normal delete '
            'does not finish within 5 minutes has its Heat stack '
            'abandoned: what the stack made stays, listed in a manifest '
            "file. 'openstack cluster force-delete' does the same with "
            'more options (--dry-run, --delete-leftovers).'
        )

    def before(self, parsed_args: argparse.Namespace) -> argparse.Namespace:
        if not parsed_args.force_delete:
            return parsed_args
        if not sys.stdin.isatty():
            raise exceptions.CommandError(
                '--force-delete asks first, and standard input is not a '
                f"terminal: run 'openstack {FORCE_DELETE} --yes "
                f"{' '.join(parsed_args.cluster)}' instead"
            )
        command = MagnumForceDelete(self.cmd.app, None, cmd_name=FORCE_DELETE)
        args = command.get_parser(f'openstack {FORCE_DELETE}').parse_args(
            list(parsed_args.cluster)
        )
        command.run(args)  # prints its table; raises when it fails
        # force-deleted (or deleted the normal way): magnumclient's own
        # delete gets none
        return hand_to_osc(parsed_args, 'cluster', [])

    def after(self, parsed_args: argparse.Namespace, return_code: int) -> int:
        return return_code
