"""scripts/skip_report.py, which fails the full test command when a test
skips for a component scripts/setup.sh installs: results of each format it
reads (ctest's JUnit, pytest's, gtest's) with provided, allowed, required
and unclassified skips; a real gtest binary whose redis test skips with
redis-server hidden from PATH; and that every skip in the tests names a
class the script knows. Run by ctest (tests/skips/CMakeLists.txt) with
python3 alone."""

import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "skip_report.py"
sys.path.insert(0, str(SCRIPT.parent))
import skip_report  # noqa: E402


def ctest_case(name, out, status="notrun", message="SKIP_REGULAR_EXPRESSION_MATCHED"):
    """A test case as ctest 3.25's --output-junit writes it."""
    skipped = f'<skipped message="{message}"/>' if status == "notrun" else ""
    return (f'<testcase name="{name}" classname="{name}" time="0.01" status="{status}">'
            f"{skipped}<system-out>{out}</system-out></testcase>")


def gtest_out(name, message):
    suite, test = name.split(".")
    return (f"Note: Google Test filter = {name}\n[ RUN      ] {name}\n"
            f"/work/tests/x_test.cpp:12: Skipped\n{message}\n\n[  SKIPPED ] {name} (0 ms)\n")


def suite(*cases):
    return f'<?xml version="1.0" encoding="UTF-8"?><testsuite tests="{len(cases)}">{"".join(cases)}</testsuite>'


class SkipReportTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="kiln-skip-report-")
        self.addCleanup(self.dir.cleanup)

    def write(self, name, text):
        path = Path(self.dir.name) / name
        path.write_text(text)
        return str(path)

    def run_report(self, *args):
        r = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr

    def test_a_provided_components_skip_fails_and_names_the_test_and_the_fix(self):
        asan = self.write("asan.xml", suite(
            ctest_case("RemoteFaults.ServerDownAtStart", gtest_out(
                "RemoteFaults.ServerDownAtStart",
                "[skip:redis-server] redis-server is not installed (scripts/setup.sh installs it)")),
            ctest_case("TuneGpu.ShippedGemmsTuneAndStartWarm", gtest_out(
                "TuneGpu.ShippedGemmsTuneAndStartWarm", "[skip:gpu] no CUDA device")),
            ctest_case("Cache.Works", "[ RUN      ] Cache.Works\n[       OK ] Cache.Works", status="run")))
        code, out = self.run_report(asan)
        self.assertEqual(code, 1, out)
        self.assertIn("skips by reason (asan): 2", out)
        self.assertRegex(out, r"1 redis-server +FAILS")
        self.assertRegex(out, r"1 gpu +allowed")
        self.assertIn("FAIL: 1 test skipped for redis-server, which scripts/setup.sh installs", out)
        self.assertIn("RemoteFaults.ServerDownAtStart [asan]: redis-server is not installed", out)
        self.assertIn("bash scripts/setup.sh", out)
        self.assertNotIn("Cache.Works", out)
        # --quick allows it, and says the full run would not.
        code, out = self.run_report("--allow-skips", asan)
        self.assertEqual(code, 0, out)
        self.assertRegex(out, r"1 redis-server +would fail")
        self.assertIn("skips allowed (--quick): 1 of them would fail the full test command", out)

    def test_allowed_skips_pass_counted_once_per_test_across_stages(self):
        cases = [ctest_case("TuneGpu.A", gtest_out("TuneGpu.A", "[skip:gpu] no CUDA device")),
                 ctest_case("TuneGpu.B", gtest_out("TuneGpu.B", "[skip:gpu] no CUDA device")),
                 ctest_case("TuneRecordedCli.C", gtest_out(
                     "TuneRecordedCli.C", "[skip:recorded-spaces] no shared recorded spaces at ../shared"))]
        asan, tsan = self.write("asan.xml", suite(*cases)), self.write("tsan.xml", suite(*cases))
        code, out = self.run_report(asan, tsan)
        self.assertEqual(code, 0, out)
        self.assertIn("skips by reason (asan, tsan): 3", out)
        self.assertRegex(out, r"2 gpu +allowed")
        self.assertRegex(out, r"1 recorded-spaces +allowed")
        self.assertIn("skips: every one allowed", out)
        code, quiet = self.run_report("--quiet", asan, tsan)
        self.assertEqual((code, quiet), (0, ""))

    def test_a_skip_without_a_known_class_fails(self):
        results = self.write("release.xml", suite(
            ctest_case("Foo.Untagged", gtest_out("Foo.Untagged", "built without something")),
            ctest_case("Foo.Typo", gtest_out("Foo.Typo", "[skip:gpus] no CUDA device")),
            ctest_case("Foo.Off", "Disabled", status="disabled")))
        code, out = self.run_report(results)
        self.assertEqual(code, 1, out)
        self.assertIn("FAIL: 3 tests skipped without a known class", out)
        self.assertIn("Foo.Untagged [release]: built without something", out)
        self.assertIn("Foo.Typo [release]: unknown class [skip:gpus] no CUDA device", out)
        self.assertIn("Foo.Off [release]: Disabled", out)
        self.assertIn("KILN_SKIP(Skip::k", out)
        self.assertEqual(self.run_report("--allow-skips", results)[0], 0)

    def test_a_required_class_fails_and_an_unknown_one_is_refused(self):
        results = self.write("asan.xml", suite(ctest_case("Nvrtc.Compiles", gtest_out(
            "Nvrtc.Compiles", "[skip:cuda-toolkit] libnvrtc.so.13: cannot open shared object file"))))
        code, out = self.run_report(results)
        self.assertEqual(code, 0, out)
        self.assertRegex(out, r"1 cuda-toolkit +allowed")
        code, out = self.run_report("--require", "cuda-toolkit", results)
        self.assertEqual(code, 1, out)
        self.assertIn("FAIL: 1 test skipped for cuda-toolkit, which this run requires", out)
        self.assertIn("CUDA_HOME", out)
        code, out = self.run_report("--require", "cuda", results)
        self.assertEqual(code, 2, out)
        self.assertIn("unknown class", out)
        code, out = self.run_report(str(Path(self.dir.name) / "missing.xml"))
        self.assertEqual(code, 2, out)

    def test_pytest_and_gtest_results_are_read(self):
        pytest_xml = self.write("pytest.xml", suite(
            '<testcase classname="python.tests.test_cuda" name="test_cuda_compile_launch_and_stream">'
            '<skipped type="pytest.skip" message="[skip:gpu] no CUDA device">'
            "python/tests/test_cuda.py:28: [skip:gpu] no CUDA device</skipped></testcase>",
            '<testcase classname="python.tests.test_x" name="test_y">'
            '<skipped type="pytest.skip" message="[skip:libzip] no zip">x</skipped></testcase>'))
        gtest_xml = self.write("gtest.xml", suite(
            '<testcase name="ServerDownAtStart" status="run" result="skipped" classname="RemoteFaults">'
            '<skipped message="x.cpp:20&#x0A;[skip:hiredis] built without hiredis/OpenSSL">'
            "<![CDATA[x.cpp:20\n[skip:hiredis] built without hiredis/OpenSSL]]></skipped></testcase>"))
        code, out = self.run_report(pytest_xml, gtest_xml)
        self.assertEqual(code, 1, out)
        self.assertRegex(out, r"1 gpu +allowed")
        self.assertIn("python.tests.test_x.test_y [pytest]: no zip", out)
        self.assertIn("RemoteFaults.ServerDownAtStart [gtest]: built without hiredis/OpenSSL", out)

    def test_every_skip_in_the_tests_names_a_known_class(self):
        tags, bare = set(), []
        python = list((ROOT / "python" / "tests").rglob("*.py")) + list((ROOT / "examples" / "python").rglob("*.py"))
        for path in list((ROOT / "tests").rglob("*.[ch]pp")) + python:
            text = path.read_text(errors="replace")
            tags |= {(m, path.name) for m in re.findall(r"\[skip:([A-Za-z0-9_-]+)\]", text)}
            # Every C++ skip goes through KILN_SKIP, which takes a class.
            if path.name != "skip.hpp" and re.search(r"GTEST_SKIP\s*\(", text):
                bare.append(f"{path.relative_to(ROOT)}: GTEST_SKIP (use KILN_SKIP(Skip::k...))")
            if path.suffix == ".py":
                for m in re.finditer(r"(skipif|importorskip|pytest\.skip|mark\.skip)\(", text):
                    if "[skip:" not in text[m.start():m.start() + 300]:
                        bare.append(f"{path.relative_to(ROOT)}: {m.group(1)} without a [skip:CLASS] reason")
        self.assertEqual(bare, [], "skips that name no class")
        self.assertTrue(any(name == "skip.hpp" for _, name in tags))
        unknown = sorted(t for t in tags if t[0] not in skip_report.CLASSES)
        self.assertEqual(unknown, [], "tags scripts/skip_report.py does not know")
        # ... and every class the C++ tests may use is one the script knows,
        # with the policy the header's comments promise.
        header = (ROOT / "tests" / "common" / "skip.hpp").read_text()
        for cls in ("llvm", "hiredis", "redis-server", "mpi", "libzip", "openblas"):
            self.assertIn(f'"[skip:{cls}] "', header)
            self.assertEqual(skip_report.CLASSES[cls][0], skip_report.PROVIDED, cls)

    @unittest.skipUnless(os.environ.get("KILN_REMOTE_TESTS"), "KILN_REMOTE_TESTS unset (ctest sets it)")
    def test_a_real_redis_test_with_redis_server_hidden_fails_the_full_run(self):
        xml = Path(self.dir.name) / "gtest.xml"
        env = dict(os.environ, PATH=str(Path(self.dir.name) / "empty"))
        test = "RemoteFaults.ServerDownAtStart"
        r = subprocess.run([os.environ["KILN_REMOTE_TESTS"], f"--gtest_filter={test}",
                            f"--gtest_output=xml:{xml}"], env=env, capture_output=True, text=True)
        # Printed unchanged, gtest's skip line would make ctest count this test skipped.
        said = (r.stdout + r.stderr).replace("[  SKIPPED ]", "[ skipped ]")
        self.assertEqual(r.returncode, 0, said)
        code, out = self.run_report(str(xml))
        self.assertEqual(code, 1, out + said)
        # redis-server, or hiredis in a build without the tier: both setup.sh's.
        self.assertRegex(out, r"FAIL: 1 test skipped for (redis-server|hiredis), which scripts/setup.sh installs")
        self.assertIn(f"{test} [gtest]: ", out)
        code, out = self.run_report("--allow-skips", str(xml))
        self.assertEqual(code, 0, out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
