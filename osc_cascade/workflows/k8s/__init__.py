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

"""``cluster leftovers delete``: what a Kubernetes cluster's controllers
(the OpenStack cloud controller manager, the Cinder and Manila CSI
drivers, Cluster API's OpenStack provider) made in its project, found by
their conventions and deleted on the cascade's engine.

The parts: ``conventions`` (the names, descriptions, tags and metadata
each controller writes, and whether a resource's match them whole: pure)
and ``footprint`` (listing the project, what is the cluster's, what is
kept and why, and the plan).
"""
