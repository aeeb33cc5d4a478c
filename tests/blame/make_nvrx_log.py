"""Write an NVRx straggler log with NVRx's own code: StragglerId and Report (with its
identify_stragglers) from attribution/straggler/reporting.py, and the Lightning callback's
_print_stragglers / _format_gpu_scores / _print_gpu_scores, taken from a checkout of
NVIDIA/nvidia-resiliency-ext (their module imports torch and CUPTI, so only these definitions
are run). The scores: 1 / each rank's median compute_s relative to the fastest, from a step-log
job folder (NVRx's relative GPU score, current performance / reference performance).

    python make_nvrx_log.py NVRX_CHECKOUT JOB_DIR OUT.log
"""

import ast
import dataclasses
import logging
import statistics
import sys
import typing
from pathlib import Path

from rigcheck.blame.step_reader import read_step_logs


def definitions(path: Path, names: set[str]) -> dict[str, ast.AST]:
    tree = ast.parse(path.read_text())
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef | ast.FunctionDef) and node.name in names:
            found[node.name] = node
    return found


def main(checkout: Path, job_dir: Path, out: Path) -> None:
    src = checkout / "src/nvidia_resiliency_ext"
    namespace = {"dataclasses": dataclasses, **vars(typing)}
    for node in definitions(
        src / "attribution/straggler/reporting.py", {"StragglerId", "Report"}
    ).values():
        exec(compile(ast.Module([node], []), "reporting.py", "exec"), namespace)
    methods = definitions(
        src / "ptl_resiliency/straggler_det_callback.py",
        {"_print_stragglers", "_format_gpu_scores", "_print_gpu_scores"},
    )
    callback = type("StragglerDetectionCallback", (), {})
    for name, node in methods.items():
        exec(compile(ast.Module([node], []), "straggler_det_callback.py", "exec"), namespace)
        function = namespace[name]
        is_static = any(getattr(d, "id", "") == "staticmethod" for d in node.decorator_list)
        setattr(callback, name, staticmethod(function) if is_static else function)
    ranks = read_step_logs(job_dir / "steps")
    medians = {r: statistics.median(s.times("compute_s")[2:]) for r, s in ranks.items()}
    best = min(medians.values())
    report = namespace["Report"](
        gpu_relative_perf_scores={r: best / m for r, m in medians.items()},
        section_relative_perf_scores={},
        gpu_individual_perf_scores={},
        section_individual_perf_scores={},
        rank_to_node={r: s.header["host"] for r, s in ranks.items()},
        local_section_summaries={},
        local_kernel_summaries={},
        generate_report_elapsed_time=0.0,
        gather_on_rank0=True,
        rank=None,
    )
    logging.basicConfig(
        filename=out, format="%(asctime)s %(levelname)s %(name)s: %(message)s", level="INFO"
    )
    self = callback()
    self.logger = logging.getLogger("nemo_logger.StragglerDetectionCallback")
    self.num_gpu_perf_scores_to_print = 5
    self.calc_relative_gpu_perf, self.calc_individual_gpu_perf = True, False
    self._print_stragglers(report.identify_stragglers())
    self._print_gpu_scores(report)


if __name__ == "__main__":
    main(*map(Path, sys.argv[1:4]))
