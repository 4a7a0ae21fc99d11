"""Packaging for deepinfer-sm80. Every setting lives in settings.ini (nbdev 2 layout); this file only reads it."""
import shlex
from configparser import ConfigParser

import setuptools

cfg = ConfigParser(delimiters=["="])
cfg.read("settings.ini", encoding="utf-8")
cfg = cfg["DEFAULT"]

extras = {
    "dev": shlex.split(cfg.get("dev_requirements", "")),
    # Optional: vLLM's own kernels as benchmark baselines and the integration target. vLLM 0.33 pins its
    # own torch (2.14) and ~60 packages, so it is never a hard dependency.
    "vllm": ["vllm==0.33.0"],
    # vLLM 0.33 pins tilelang 0.1.12; 0.1.12 to 0.1.15 all compile our TileLang baselines.
    "tilelang": ["tilelang>=0.1.12,<0.2"],
}

setuptools.setup(
    name=cfg["repo"],
    version=cfg["version"],
    description=cfg["description"],
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    author=cfg["author"],
    author_email=cfg["author_email"],
    license="Apache-2.0",
    license_files=["LICENSE"],
    keywords=cfg["keywords"],
    url=cfg["git_url"],
    project_urls={"Documentation": cfg["doc_host"] + cfg["doc_baseurl"], "Source": cfg["git_url"],
                  "Issues": cfg["git_url"] + "/issues"},
    python_requires=">=" + cfg["min_python"],
    packages=setuptools.find_packages(include=[cfg["lib_name"], cfg["lib_name"] + ".*"]),
    package_data={cfg["lib_name"]: ["configs/*.json"]},
    include_package_data=True,
    install_requires=shlex.split(cfg.get("requirements", "")),
    extras_require=extras,
    entry_points={
        "console_scripts": cfg.get("console_scripts", "").split(),
        "nbdev": [f"{cfg['lib_path']}={cfg['lib_path']}._modidx:d"],
    },
    classifiers=[
        "Development Status :: 3 - Alpha",
        "Intended Audience :: Developers",
        "License :: OSI Approved :: Apache Software License",
        "Programming Language :: Python :: 3",
        "Programming Language :: Python :: 3 :: Only",
        "Programming Language :: Python :: 3.10",
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3.12",
        "Operating System :: POSIX :: Linux",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
        "Environment :: GPU :: NVIDIA CUDA",
    ],
    zip_safe=False,
)
