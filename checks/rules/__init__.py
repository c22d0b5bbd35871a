"""Every rule, listed here explicitly: this tuple is the registry (`npu-review rules` prints it).

One rule per module `npuXXX_<name>.py`, one id per rule, never reused. Adding a rule: write its module (see the
README's Development section), import its class here and add it to RULES in id order.
"""

from __future__ import annotations

from npu_review.checks.rules.npu101_graph_mode_with_task_queue_2 import GraphModeWithTaskQueue2
from npu_review.checks.rules.npu102_graph_config_dead_under_eager import GraphConfigDeadUnderEager
from npu_review.checks.rules.npu103_graph_mode_switch import GraphModeSwitch
from npu_review.checks.rules.npu104_undefined_variable_in_override import UndefinedVariableInOverride
from npu_review.checks.rules.npu105_hydra_plus_mismatch import HydraPlusMismatch
from npu_review.checks.rules.npu106_ascend_invalid_values import AscendInvalidValues
from npu_review.checks.rules.npu107_default_change_without_npu_sweep import DefaultChangeWithoutNpuSweep
from npu_review.checks.rules.npu108_invalid_cudagraph_mode import InvalidCudagraphMode
from npu_review.checks.rules.npu109_launcher_json_invalid import LauncherJsonInvalid
from npu_review.checks.rules.npu110_misspelled_ascend_env_variable import MisspelledAscendEnvVariable
from npu_review.checks.rules.npu111_shell_continuation_broken import ShellContinuationBroken
from npu_review.checks.rules.npu113_cuda_setting_in_npu_context import CudaSettingInNpuContext
from npu_review.checks.rules.npu114_environment_set_in_child import EnvironmentSetInChild
from npu_review.checks.rules.npu115_shell_syntax_broken import ShellSyntaxBroken
from npu_review.checks.rules.npu116_override_value_split import OverrideValueSplit
from npu_review.checks.rules.npu117_script_argument_unknown import ScriptArgumentUnknown
from npu_review.checks.rules.npu118_named_file_missing import NamedFileMissing
from npu_review.checks.rules.npu119_variable_never_set import VariableNeverSet
from npu_review.checks.rules.npu120_set_u_before_cann_env import SetUBeforeCannEnv
from npu_review.checks.rules.npu121_environ_value_not_string import EnvironValueNotString
from npu_review.checks.rules.npu200_invalid_workflow_yaml import InvalidWorkflowYaml
from npu_review.checks.rules.npu201_mixed_image_tag_formats import MixedImageTagFormats
from npu_review.checks.rules.npu202_image_tag_not_produced import ImageTagNotProduced
from npu_review.checks.rules.npu203_image_tag_component_naming import ImageTagComponentNaming
from npu_review.checks.rules.npu204_unpublished_tag_advertised import UnpublishedTagAdvertised
from npu_review.checks.rules.npu205_gha_cache_scope_collision import GhaCacheScopeCollision
from npu_review.checks.rules.npu206_build_push_output_misconfigured import BuildPushOutputMisconfigured
from npu_review.checks.rules.npu207_registry_cleanup_command import RegistryCleanupCommand
from npu_review.checks.rules.npu208_ci_overrides_image_pin import CiOverridesImagePin
from npu_review.checks.rules.npu209_export_not_persisted import ExportNotPersisted
from npu_review.checks.rules.npu210_paths_filter_missing_file import PathsFilterMissingFile
from npu_review.checks.rules.npu211_runner_label_mismatch import RunnerLabelMismatch
from npu_review.checks.rules.npu212_missing_fork_guard import MissingForkGuard
from npu_review.checks.rules.npu213_metadata_action_tag_rule_invalid import MetadataActionTagRuleInvalid
from npu_review.checks.rules.npu214_two_producers_of_one_tag import TwoProducersOfOneTag
from npu_review.checks.rules.npu215_ci_test_config_missing import CiTestConfigMissing
from npu_review.checks.rules.npu216_concurrency_group_collision import ConcurrencyGroupCollision
from npu_review.checks.rules.npu217_cache_restored_without_content_hash import CacheRestoredWithoutContentHash
from npu_review.checks.rules.npu218_reusable_workflow_input_not_forwarded import ReusableWorkflowInputNotForwarded
from npu_review.checks.rules.npu219_ci_image_version_drift import CiImageVersionDrift
from npu_review.checks.rules.npu220_image_pushed_not_built import ImagePushedNotBuilt
from npu_review.checks.rules.npu221_build_arg_not_declared import BuildArgNotDeclared
from npu_review.checks.rules.npu222_matrix_value_unmatched import MatrixValueUnmatched
from npu_review.checks.rules.npu223_checkout_not_the_change import CheckoutNotTheChange
from npu_review.checks.rules.npu224_runner_label_misspelled import RunnerLabelMisspelled
from npu_review.checks.rules.npu226_step_before_checkout import StepBeforeCheckout
from npu_review.checks.rules.npu227_environment_stack_disagrees import EnvironmentStackDisagrees
from npu_review.checks.rules.npu228_device_count_exceeded import DeviceCountExceeded
from npu_review.checks.rules.npu229_device_variant_mismatch import DeviceVariantMismatch
from npu_review.checks.rules.npu301_tls_verification_disabled import TlsVerificationDisabled
from npu_review.checks.rules.npu302_global_build_parallelism_env import GlobalBuildParallelismEnv
from npu_review.checks.rules.npu303_sourcing_not_persisted import SourcingNotPersisted
from npu_review.checks.rules.npu304_empty_continuation_line import EmptyContinuationLine
from npu_review.checks.rules.npu305_from_device_mismatch import FromDeviceMismatch
from npu_review.checks.rules.npu306_missing_and_in_continued_run import MissingAndInContinuedRun
from npu_review.checks.rules.npu307_cann_torch_npu_incompatible import CannTorchNpuIncompatible
from npu_review.checks.rules.npu308_torch_pin_overwritten import TorchPinOverwritten
from npu_review.checks.rules.npu309_shallow_clone_checkout import ShallowCloneCheckout
from npu_review.checks.rules.npu310_a2_a3_twin_drift import A2A3TwinDrift
from npu_review.checks.rules.npu311_triton_uninstalled_after_triton_ascend import TritonUninstalledAfterTritonAscend
from npu_review.checks.rules.npu312_unsupported_package_on_npu import UnsupportedPackageOnNpu
from npu_review.checks.rules.npu313_arg_used_before_declared import ArgUsedBeforeDeclared
from npu_review.checks.rules.npu314_build_mirror_config_persisted import BuildMirrorConfigPersisted
from npu_review.checks.rules.npu315_version_never_published import VersionNeverPublished
from npu_review.checks.rules.npu316_cann_package_file_unknown import CannPackageFileUnknown
from npu_review.checks.rules.npu317_bash_syntax_under_sh import BashSyntaxUnderSh
from npu_review.checks.rules.npu318_run_line_dangling_operator import RunLineDanglingOperator
from npu_review.checks.rules.npu319_installs_from_moving_branch import InstallsFromMovingBranch
from npu_review.checks.rules.npu321_requirements_file_invalid import RequirementsFileInvalid
from npu_review.checks.rules.npu322_apt_install_without_update import AptInstallWithoutUpdate
from npu_review.checks.rules.npu401_silent_cuda_default_on_npu_path import SilentCudaDefaultOnNpuPath
from npu_review.checks.rules.npu402_npu_workaround_removed import NpuWorkaroundRemoved
from npu_review.checks.rules.npu501_invisible_unicode_in_path import InvisibleUnicodeInPath
from npu_review.checks.rules.npu502_broken_repo_link import BrokenRepoLink
from npu_review.checks.rules.npu503_version_table_inconsistent import VersionTableInconsistent
from npu_review.checks.rules.npu504_install_guide_versions_disagree import InstallGuideVersionsDisagree
from npu_review.checks.rules.npu506_package_index_mismatch import PackageIndexMismatch

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
    CudaSettingInNpuContext,
    EnvironmentSetInChild,
    ShellSyntaxBroken,
    OverrideValueSplit,
    ScriptArgumentUnknown,
    NamedFileMissing,
    VariableNeverSet,
    SetUBeforeCannEnv,
    EnvironValueNotString,
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
    ImagePushedNotBuilt,
    BuildArgNotDeclared,
    MatrixValueUnmatched,
    CheckoutNotTheChange,
    RunnerLabelMisspelled,
    StepBeforeCheckout,
    EnvironmentStackDisagrees,
    DeviceCountExceeded,
    DeviceVariantMismatch,
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
    VersionNeverPublished,
    CannPackageFileUnknown,
    BashSyntaxUnderSh,
    RunLineDanglingOperator,
    InstallsFromMovingBranch,
    RequirementsFileInvalid,
    AptInstallWithoutUpdate,
    SilentCudaDefaultOnNpuPath,
    NpuWorkaroundRemoved,
    InvisibleUnicodeInPath,
    BrokenRepoLink,
    VersionTableInconsistent,
    InstallGuideVersionsDisagree,
    PackageIndexMismatch,
)
