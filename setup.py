import setuptools

setuptools.setup(pbr=True)
