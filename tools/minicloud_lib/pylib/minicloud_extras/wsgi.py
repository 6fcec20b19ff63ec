"""gunicorn entry point for every minicloud API service.

The OpenStack WSGI modules parse ``sys.argv`` with oslo.config, so gunicorn's
own command line must not reach them.  tools/minicloud starts gunicorn with

    MINICLOUD_WSGI_APP=<module>:<attribute>
    MINICLOUD_WSGI_ARGV=<JSON list used as sys.argv>

and ``minicloud_extras.wsgi:application`` as the application.
"""
import importlib
import json
import os
import sys

sys.argv = json.loads(os.environ.get('MINICLOUD_WSGI_ARGV') or '["wsgi"]')
_module, _, _attr = os.environ['MINICLOUD_WSGI_APP'].partition(':')
application = getattr(importlib.import_module(_module), _attr or 'application')
