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

"""A file-backed fake Cinder volume driver.

Volumes are sparse files in ``<state_path>/volumes``; snapshots are sparse
copies.  ``initialize_connection`` returns an os-brick ``local`` connection to
the file, which is what the posix backup driver needs to read a volume.
Nova's fake virt driver ignores the connection info, so attach works too.
"""

import os

from cinder.tests import fake_driver
from oslo_config import cfg
from oslo_utils import units

_CHUNK = 1024 * 1024


def _sparse_copy(src, dst, size=None):
    with open(src, 'rb') as fin, open(dst, 'wb') as fout:
        while True:
            block = fin.read(_CHUNK)
            if not block:
                break
            if block.count(0) == len(block):
                fout.seek(len(block), os.SEEK_CUR)
            else:
                fout.write(block)
        fout.truncate(max(size or 0, fin.tell()))


class FileBackedFakeDriver(fake_driver.FakeLoggingVolumeDriver):
    def _dir(self):
        path = os.path.join(cfg.CONF.state_path, 'volumes')
        os.makedirs(path, exist_ok=True)
        return path

    def local_path(self, volume, vg=None):
        return os.path.join(self._dir(), volume['name'])

    def _snap_path(self, snapshot):
        return os.path.join(self._dir(), snapshot['name'])

    def create_volume(self, volume):
        with open(self.local_path(volume), 'wb') as f:
            f.truncate(int(volume['size']) * units.Gi)

    def delete_volume(self, volume):
        try:
            os.unlink(self.local_path(volume))
        except FileNotFoundError:
            pass

    def extend_volume(self, volume, new_size):
        with open(self.local_path(volume), 'ab') as f:
            f.truncate(int(new_size) * units.Gi)

    def create_snapshot(self, snapshot):
        _sparse_copy(
            self.local_path(snapshot.volume), self._snap_path(snapshot)
        )

    def delete_snapshot(self, snapshot):
        try:
            os.unlink(self._snap_path(snapshot))
        except FileNotFoundError:
            pass

    def create_volume_from_snapshot(self, volume, snapshot):
        _sparse_copy(
            self._snap_path(snapshot),
            self.local_path(volume),
            int(volume['size']) * units.Gi,
        )

    def create_cloned_volume(self, volume, src_vref):
        _sparse_copy(
            self.local_path(src_vref),
            self.local_path(volume),
            int(volume['size']) * units.Gi,
        )

    def validate_connector(self, connector):
        pass

    def initialize_connection(self, volume, connector):
        return {
            'driver_volume_type': 'local',
            'data': {
                'device_path': self.local_path(volume),
                'access_mode': 'rw',
            },
        }

    def terminate_connection(self, volume, connector, **kwargs):
        pass
