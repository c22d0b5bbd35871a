"""Every rule, listed here explicitly: this tuple is the registry (`npu-review rules` prints it).

One rule per module `npuXXX_<name>.py`, one id per rule, never reused. Adding a rule: write its module (see the
README's Development section) and add its module and class to MODULES in id order.

Nothing is imported here: a rule's module is imported when a review meets a file of its kinds, or when its class is
asked for (checks.rule.rule_specs holds what the engine decides that by; `RULES`, every class, imports them all).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from npu_review.checks.rule import Rule

# (module under npu_review.checks.rules, class), in id order.
MODULES: tuple[tuple[str, str], ...] = (
    ("npu101_graph_mode_with_task_queue_2", "GraphModeWithTaskQueue2"),
    ("npu102_graph_config_dead_under_eager", "GraphConfigDeadUnderEager"),
    ("npu103_graph_mode_switch", "GraphModeSwitch"),
    ("npu104_undefined_variable_in_override", "UndefinedVariableInOverride"),
    ("npu105_hydra_plus_mismatch", "HydraPlusMismatch"),
    ("npu106_ascend_invalid_values", "AscendInvalidValues"),
    ("npu107_default_change_without_npu_sweep", "DefaultChangeWithoutNpuSweep"),
    ("npu108_invalid_cudagraph_mode", "InvalidCudagraphMode"),
    ("npu109_launcher_json_invalid", "LauncherJsonInvalid"),
    ("npu110_misspelled_ascend_env_variable", "MisspelledAscendEnvVariable"),
    ("npu111_shell_continuation_broken", "ShellContinuationBroken"),
    ("npu113_cuda_setting_in_npu_context", "CudaSettingInNpuContext"),
    ("npu114_environment_set_in_child", "EnvironmentSetInChild"),
    ("npu115_shell_syntax_broken", "ShellSyntaxBroken"),
    ("npu116_override_value_split", "OverrideValueSplit"),
    ("npu117_script_argument_unknown", "ScriptArgumentUnknown"),
    ("npu118_named_file_missing", "NamedFileMissing"),
    ("npu119_variable_never_set", "VariableNeverSet"),
    ("npu120_set_u_before_cann_env", "SetUBeforeCannEnv"),
    ("npu121_environ_value_not_string", "EnvironValueNotString"),
    ("npu122_cmake_definition_unresolved", "CMakeDefinitionUnresolved"),
    ("npu123_merge_conflict_markers", "MergeConflictMarkers"),
    ("npu124_misspelled_ascend_name", "MisspelledAscendName"),
    ("npu125_argument_count_check_contradicts", "ArgumentCountCheckContradicts"),
    ("npu200_invalid_workflow_yaml", "InvalidWorkflowYaml"),
    ("npu201_mixed_image_tag_formats", "MixedImageTagFormats"),
    ("npu202_image_tag_not_produced", "ImageTagNotProduced"),
    ("npu203_image_tag_component_naming", "ImageTagComponentNaming"),
    ("npu204_unpublished_tag_advertised", "UnpublishedTagAdvertised"),
    ("npu205_gha_cache_scope_collision", "GhaCacheScopeCollision"),
    ("npu206_build_push_output_misconfigured", "BuildPushOutputMisconfigured"),
    ("npu207_registry_cleanup_command", "RegistryCleanupCommand"),
    ("npu208_ci_overrides_image_pin", "CiOverridesImagePin"),
    ("npu209_export_not_persisted", "ExportNotPersisted"),
    ("npu210_paths_filter_missing_file", "PathsFilterMissingFile"),
    ("npu211_runner_label_mismatch", "RunnerLabelMismatch"),
    ("npu212_missing_fork_guard", "MissingForkGuard"),
    ("npu213_metadata_action_tag_rule_invalid", "MetadataActionTagRuleInvalid"),
    ("npu214_two_producers_of_one_tag", "TwoProducersOfOneTag"),
    ("npu215_ci_test_config_missing", "CiTestConfigMissing"),
    ("npu216_concurrency_group_collision", "ConcurrencyGroupCollision"),
    ("npu217_cache_restored_without_content_hash", "CacheRestoredWithoutContentHash"),
    ("npu218_reusable_workflow_input_not_forwarded", "ReusableWorkflowInputNotForwarded"),
    ("npu219_ci_image_version_drift", "CiImageVersionDrift"),
    ("npu220_image_pushed_not_built", "ImagePushedNotBuilt"),
    ("npu221_build_arg_not_declared", "BuildArgNotDeclared"),
    ("npu222_matrix_value_unmatched", "MatrixValueUnmatched"),
    ("npu223_checkout_not_the_change", "CheckoutNotTheChange"),
    ("npu224_runner_label_misspelled", "RunnerLabelMisspelled"),
    ("npu225_paths_filter_on_schedule", "PathsFilterOnSchedule"),
    ("npu226_step_before_checkout", "StepBeforeCheckout"),
    ("npu227_environment_stack_disagrees", "EnvironmentStackDisagrees"),
    ("npu228_device_count_exceeded", "DeviceCountExceeded"),
    ("npu229_device_variant_mismatch", "DeviceVariantMismatch"),
    ("npu230_event_property_missing", "EventPropertyMissing"),
    ("npu301_tls_verification_disabled", "TlsVerificationDisabled"),
    ("npu302_global_build_parallelism_env", "GlobalBuildParallelismEnv"),
    ("npu303_sourcing_not_persisted", "SourcingNotPersisted"),
    ("npu304_empty_continuation_line", "EmptyContinuationLine"),
    ("npu305_from_device_mismatch", "FromDeviceMismatch"),
    ("npu306_missing_and_in_continued_run", "MissingAndInContinuedRun"),
    ("npu307_cann_torch_npu_incompatible", "CannTorchNpuIncompatible"),
    ("npu308_torch_pin_overwritten", "TorchPinOverwritten"),
    ("npu309_shallow_clone_checkout", "ShallowCloneCheckout"),
    ("npu310_a2_a3_twin_drift", "A2A3TwinDrift"),
    ("npu311_triton_uninstalled_after_triton_ascend", "TritonUninstalledAfterTritonAscend"),
    ("npu312_unsupported_package_on_npu", "UnsupportedPackageOnNpu"),
    ("npu313_arg_used_before_declared", "ArgUsedBeforeDeclared"),
    ("npu314_build_mirror_config_persisted", "BuildMirrorConfigPersisted"),
    ("npu315_version_never_published", "VersionNeverPublished"),
    ("npu316_cann_package_file_unknown", "CannPackageFileUnknown"),
    ("npu317_bash_syntax_under_sh", "BashSyntaxUnderSh"),
    ("npu318_run_line_dangling_operator", "RunLineDanglingOperator"),
    ("npu319_installs_from_moving_branch", "InstallsFromMovingBranch"),
    ("npu321_requirements_file_invalid", "RequirementsFileInvalid"),
    ("npu322_apt_install_without_update", "AptInstallWithoutUpdate"),
    ("npu323_program_missing_in_image", "ProgramMissingInImage"),
    ("npu324_wheel_retagged_manylinux", "WheelRetaggedManylinux"),
    ("npu325_unknown_dockerfile_instruction", "UnknownDockerfileInstruction"),
    ("npu326_confirmation_prompt_unanswered", "ConfirmationPromptUnanswered"),
    ("npu401_silent_cuda_default_on_npu_path", "SilentCudaDefaultOnNpuPath"),
    ("npu402_npu_workaround_removed", "NpuWorkaroundRemoved"),
    ("npu403_env_flag_read_as_truthy", "EnvFlagReadAsTruthy"),
    ("npu404_subpackage_not_packaged", "SubpackageNotPackaged"),
    ("npu501_invisible_unicode_in_path", "InvisibleUnicodeInPath"),
    ("npu502_broken_repo_link", "BrokenRepoLink"),
    ("npu503_version_table_inconsistent", "VersionTableInconsistent"),
    ("npu504_install_guide_versions_disagree", "InstallGuideVersionsDisagree"),
    ("npu506_package_index_mismatch", "PackageIndexMismatch"),
)


def load(module: str, name: str) -> type[Rule]:
    """The rule class `name` of `module` (one of MODULES), imported now."""
    cls: type[Rule] = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    return cls


def __getattr__(name: str) -> Any:
    if name == "RULES":  # every rule class, in id order: imports every rule module
        rules = tuple(load(m, c) for m, c in MODULES)
        globals()["RULES"] = rules
        return rules
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
