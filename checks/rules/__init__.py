"""Every rule, listed here explicitly: this tuple is the registry (`npu-review rules` prints it).

One rule per module `npuXXX_<name>.py`, one id per rule, never reused. Adding a rule: write its module (see the
README's Development section), import its class here and add it to RULES in id order.
"""

from __future__ import annotations

from checks.rules.npu101_graph_mode_with_task_queue_2 import GraphModeWithTaskQueue2
from checks.rules.npu102_graph_config_dead_under_eager import GraphConfigDeadUnderEager
from checks.rules.npu103_graph_mode_switch import GraphModeSwitch
from checks.rules.npu104_undefined_variable_in_override import UndefinedVariableInOverride
from checks.rules.npu105_hydra_plus_mismatch import HydraPlusMismatch
from checks.rules.npu106_ascend_invalid_values import AscendInvalidValues
from checks.rules.npu107_default_change_without_npu_sweep import DefaultChangeWithoutNpuSweep
from checks.rules.npu108_invalid_cudagraph_mode import InvalidCudagraphMode
from checks.rules.npu109_launcher_json_invalid import LauncherJsonInvalid
from checks.rules.npu110_misspelled_ascend_env_variable import MisspelledAscendEnvVariable
from checks.rules.npu111_shell_continuation_broken import ShellContinuationBroken
from checks.rules.npu200_invalid_workflow_yaml import InvalidWorkflowYaml
from checks.rules.npu201_mixed_image_tag_formats import MixedImageTagFormats
from checks.rules.npu202_image_tag_not_produced import ImageTagNotProduced
from checks.rules.npu203_image_tag_component_naming import ImageTagComponentNaming
from checks.rules.npu204_unpublished_tag_advertised import UnpublishedTagAdvertised
from checks.rules.npu205_gha_cache_scope_collision import GhaCacheScopeCollision
from checks.rules.npu206_build_push_output_misconfigured import BuildPushOutputMisconfigured
from checks.rules.npu207_registry_cleanup_command import RegistryCleanupCommand
from checks.rules.npu208_ci_overrides_image_pin import CiOverridesImagePin
from checks.rules.npu209_export_not_persisted import ExportNotPersisted
from checks.rules.npu210_paths_filter_missing_file import PathsFilterMissingFile
from checks.rules.npu211_runner_label_mismatch import RunnerLabelMismatch
from checks.rules.npu212_missing_fork_guard import MissingForkGuard
from checks.rules.npu213_metadata_action_tag_rule_invalid import MetadataActionTagRuleInvalid
from checks.rules.npu214_two_producers_of_one_tag import TwoProducersOfOneTag
from checks.rules.npu215_ci_test_config_missing import CiTestConfigMissing
from checks.rules.npu216_concurrency_group_collision import ConcurrencyGroupCollision
from checks.rules.npu217_cache_restored_without_content_hash import CacheRestoredWithoutContentHash
from checks.rules.npu218_reusable_workflow_input_not_forwarded import ReusableWorkflowInputNotForwarded
from checks.rules.npu219_ci_image_version_drift import CiImageVersionDrift
from checks.rules.npu301_tls_verification_disabled import TlsVerificationDisabled
from checks.rules.npu302_global_build_parallelism_env import GlobalBuildParallelismEnv
from checks.rules.npu303_sourcing_not_persisted import SourcingNotPersisted
from checks.rules.npu304_empty_continuation_line import EmptyContinuationLine
from checks.rules.npu305_from_device_mismatch import FromDeviceMismatch
from checks.rules.npu306_missing_and_in_continued_run import MissingAndInContinuedRun
from checks.rules.npu307_cann_torch_npu_incompatible import CannTorchNpuIncompatible
from checks.rules.npu308_torch_pin_overwritten import TorchPinOverwritten
from checks.rules.npu309_shallow_clone_checkout import ShallowCloneCheckout
from checks.rules.npu310_a2_a3_twin_drift import A2A3TwinDrift
from checks.rules.npu311_triton_uninstalled_after_triton_ascend import TritonUninstalledAfterTritonAscend
from checks.rules.npu312_unsupported_package_on_npu import UnsupportedPackageOnNpu
from checks.rules.npu313_arg_used_before_declared import ArgUsedBeforeDeclared
from checks.rules.npu314_build_mirror_config_persisted import BuildMirrorConfigPersisted
from checks.rules.npu401_silent_cuda_default_on_npu_path import SilentCudaDefaultOnNpuPath
from checks.rules.npu402_npu_workaround_removed import NpuWorkaroundRemoved
from checks.rules.npu501_invisible_unicode_in_path import InvisibleUnicodeInPath
from checks.rules.npu502_broken_repo_link import BrokenRepoLink
from checks.rules.npu503_version_table_inconsistent import VersionTableInconsistent

RULES = (
    GraphModeWithTaskQueue2,
    GraphConfigDeadUnderEager,
    GraphModeSwitch,
    UndefinedVariableInOverride,
    HydraPlusMismatch,
    AscendInvalidValues,
    DefaultChangeWithoutNpuSweep,
    InvalidCudagraphMode,
    LauncherJsonInvalid,
    MisspelledAscendEnvVariable,
    ShellContinuationBroken,
    InvalidWorkflowYaml,
    MixedImageTagFormats,
    ImageTagNotProduced,
    ImageTagComponentNaming,
    UnpublishedTagAdvertised,
    GhaCacheScopeCollision,
    BuildPushOutputMisconfigured,
    RegistryCleanupCommand,
    CiOverridesImagePin,
    ExportNotPersisted,
    PathsFilterMissingFile,
    RunnerLabelMismatch,
    MissingForkGuard,
    MetadataActionTagRuleInvalid,
    TwoProducersOfOneTag,
    CiTestConfigMissing,
    ConcurrencyGroupCollision,
    CacheRestoredWithoutContentHash,
    ReusableWorkflowInputNotForwarded,
    CiImageVersionDrift,
    TlsVerificationDisabled,
    GlobalBuildParallelismEnv,
    SourcingNotPersisted,
    EmptyContinuationLine,
    FromDeviceMismatch,
    MissingAndInContinuedRun,
    CannTorchNpuIncompatible,
    TorchPinOverwritten,
    ShallowCloneCheckout,
    A2A3TwinDrift,
    TritonUninstalledAfterTritonAscend,
    UnsupportedPackageOnNpu,
    ArgUsedBeforeDeclared,
    BuildMirrorConfigPersisted,
    SilentCudaDefaultOnNpuPath,
    NpuWorkaroundRemoved,
    InvisibleUnicodeInPath,
    BrokenRepoLink,
    VersionTableInconsistent,
)
