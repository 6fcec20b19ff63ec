"""Small pieces that tools/minicloud adds to the service venv.

Nothing here is imported by the project under test.  The modules run inside
the minicloud service venv (OpenStack servers from PyPI):

- ``wsgi``: one gunicorn entry point for every API service;
- ``ml2_mech``: an agent-less ML2 mechanism driver that binds every port;
- ``cinder_driver``: a file-backed fake Cinder volume driver (backups work);
- ``helper``: Swift rings and Octavia certificates;
- ``setup_cloud``: identity data, shared resources and readiness checks,
  all in one openstacksdk process.
"""
