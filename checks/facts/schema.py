"""The shape of the facts: one frozen dataclass per section, and which sections are universal or a project's.

The values live in the data files only (`ascend.yml`, `profiles/<name>.yml`); a field here has no default except
"absent" (None, or an empty mapping) where the data may leave a key out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from npu_review.checks.facts.typed import Regex
from npu_review.checks.parsers.sh.launchers import Launchers as LauncherDeclarations

UNIVERSAL = "universal"  # true of Ascend NPU, CANN, torch_npu, vLLM(-Ascend), GitHub Actions: any project
PROJECT = "project"  # one project's layout and conventions: a profile


def _universal() -> dict[str, str]:
    return {"scope": UNIVERSAL}


def _sourced() -> dict[str, object]:
    """A universal section that bench/facts/refresh.py writes from its sources (checks/facts/sourced.json)."""
    return {"scope": UNIVERSAL, "sourced": True}


def _project() -> dict[str, str]:
    return {"scope": PROJECT}


@dataclass(frozen=True)
class Section:
    source: str  # where the facts were read
    date: str  # when


# -- universal -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GraphModes(Section):
    valid: tuple[str, ...]
    full_with_prefill: tuple[str, ...]
    case_insensitive: bool


@dataclass(frozen=True)
class VllmAscend(Section):
    graph_mode_since: str


@dataclass(frozen=True)
class TaskQueue(Section):
    graph_incompatible_levels: tuple[str, ...]
    graph_recommended_level: str
    env: str


@dataclass(frozen=True)
class TorchNpuRelease:
    torch: str  # the torch it extends
    cann: str  # the CANN of its TorchNPU line (lower case, `8.3.rc1`); "" when the line's CANN is unknown
    listed: bool  # the compatibility table lists it (else a release tag or branch of Ascend/pytorch does)


@dataclass(frozen=True)
class TorchNpuReleases(Section):
    lines: Mapping[str, str]  # TorchNPU release line -> CANN
    releases: Mapping[str, TorchNpuRelease]  # torch_npu version (PEP 440 canonical) -> what it is built for
    python: Mapping[str, tuple[str, ...]]  # torch -> Python versions torch_npu supports with it


@dataclass(frozen=True)
class TorchTorchvision(Section):
    table: Mapping[str, str]


@dataclass(frozen=True)
class PublishedVersions(Section):
    packages: Mapping[str, tuple[str, ...]]  # normalised distribution name -> every version on the index


@dataclass(frozen=True)
class PackageIndexes(Section):
    # Index URLs that serve PyPI's versions (PyPI itself and its mirrors; PyTorch's per-platform indexes for the
    # packages it hosts): a pin installed from one of them is judged against `published_versions`.
    pypi: tuple[Regex, ...]
    # What names another index in a file: pip options, their environment variables and `pip config` keys, uv's.
    index_options: tuple[str, ...]


@dataclass(frozen=True)
class NightlyBuilds(Section):
    # Normalised distribution name -> the forms of the number after `.dev` of its nightly builds (`YYYYMMDD`, or
    # `YYYYMMDDHH` with the hour): every nightly it publishes is numbered by its build date.
    dated: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class EnvNames(Section):
    names: tuple[str, ...]  # environment variables a component reads (documented or in its code)
    # names of `names` the component read once and no longer does (its registry dropped them, nothing reads them)
    # -> the date (YYYY-MM-DD) they were dropped
    retired: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CudaEnv(Section):
    counterparts: Mapping[str, str]  # CUDA / NCCL variable -> the NPU variable doing its job, or "none"


@dataclass(frozen=True)
class CannPackages(Section):
    # CANN version as the file names spell it (`8.3.RC1`) -> file name stem -> architectures ("" = none).
    versions: Mapping[str, Mapping[str, tuple[str, ...]]]
    # Package role (toolkit, nnal, operators) -> regular expressions of its stems, one per naming (`(?P<device>...)`
    # where the stem names a device: the operator packages are per device).
    kinds: Mapping[str, tuple[Regex, ...]]


@dataclass(frozen=True)
class GithubEvents(Section):
    # Event name (`on:` key) -> the top-level properties of its webhook payload, every activity type together (what
    # `github.event.<name>` can resolve to). An event not listed is unknown.
    payload_keys: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class SocVersions(Section):
    a2: tuple[str, ...]
    a3: tuple[str, ...]
    default: Mapping[str, str]
    from_tokens: Mapping[str, tuple[str, ...]]
    ops_packages: Mapping[str, str]
    # Device family -> the SOC names the ops repositories' builds take (`build.sh --soc=ascend910_93`).
    compute_units: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class AscendNames(Section):
    """The names of Ascend's chips and command-line tools, as builds, scripts and guides write them (NPU124)."""

    socs: tuple[str, ...]  # SOC and compute-unit names (compared lower case); soc_versions' a2 and a3 are added
    programs: tuple[str, ...]  # Ascend's own commands (`npu-smi`)
    # Other accelerators' commands a letter from Ascend's (`xpu-smi` is Kunlunxin's and Intel's): real names
    other_programs: tuple[str, ...]
    # CANN install-tree folders (from the install root) -> the environment script CANN installs in each
    env_scripts: Mapping[str, str]
    # A CANN package's installer (`Ascend-cann-<package>_<version>_linux-<arch>.run`) -> the folder it makes right
    # under the install path
    installer_folders: Mapping[str, str]


@dataclass(frozen=True)
class VllmAscendRequirements(Section):
    versions: Mapping[str, Mapping[str, str]]
    triton_ascend_since: str
    repos: tuple[str, ...]


@dataclass(frozen=True)
class NpuUnsupportedPackages(Section):
    names: Mapping[str, str]
    cuda_wheel_pattern: Regex
    cuda_local_pattern: Regex
    cuda_index_pattern: Regex
    allowed: tuple[str, ...]
    requirement_file_pattern: Regex


@dataclass(frozen=True)
class TorchResolvers(Section):
    repos: tuple[str, ...]
    no_torch_env: Mapping[str, Mapping[str, str]]


@dataclass(frozen=True)
class InvisibleUnicode(Section):
    ranges: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class GithubActions(Section):
    manual_triggers: tuple[str, ...]
    fork_triggers: tuple[str, ...]
    status_functions: tuple[str, ...]
    automatic_secrets: tuple[str, ...]


@dataclass(frozen=True)
class RegistryCleanup(Section):
    delete_commands: tuple[tuple[str, ...], ...]
    log_commands: tuple[str, ...]


@dataclass(frozen=True)
class Framework:
    repos: tuple[str, ...]
    packages: tuple[str, ...]


@dataclass(frozen=True)
class FrameworkPins(Section):
    frameworks: Mapping[str, Framework]
    canary_words: tuple[str, ...]


@dataclass(frozen=True)
class EnvPersistence(Section):
    ambient: tuple[str, ...]
    ambient_prefixes: tuple[str, ...]


@dataclass(frozen=True)
class ShellEnv(Section):
    known: tuple[str, ...]
    known_prefixes: tuple[str, ...]
    harmless_eval: tuple[str, ...]


@dataclass(frozen=True)
class AscendContent(Section):
    base_images: tuple[Regex, ...]
    install_markers: tuple[Regex, ...]
    runner_labels: tuple[Regex, ...]
    workflow_markers: tuple[Regex, ...]
    script_markers: tuple[Regex, ...]
    package_names: tuple[Regex, ...]


@dataclass(frozen=True)
class AscendEnv(Section):
    # Real variables no sourced section states (the env_* sections hold the rest): NPU110 knows their union.
    known: tuple[str, ...]
    families: tuple[str, ...]  # prefixes of the names NPU110 checks (after `-` is read as `_`)
    min_length: int  # shorter names are left alone (too many real names lie close together)
    launch: tuple[str, ...]  # what a distributed launch on Ascend reads besides the families (`RANK_TABLE_FILE`)
    # A name of n characters may be max(base_distance, n // chars_per_edit) edits from the one meant, at most
    # max_distance: the distance grows with the name's length.
    base_distance: int
    chars_per_edit: int
    max_distance: int
    chars_per_sure_edit: int  # up to n // chars_per_sure_edit edits it is a warning, beyond a notice


@dataclass(frozen=True)
class BuildEnv(Section):
    parallelism: tuple[str, ...]  # variables that always set build parallelism
    make_flags: tuple[str, ...]  # variables that do when they hold `-j` / `--jobs`
    # Build switches of packages compiled in Ascend images (their setup reads them), with why ENV is wrong.
    switches: Mapping[str, str]
    # A switch's value when nothing sets it (what its package reads by default): ENV of that value changes nothing.
    switch_defaults: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DevicePackages(Section):
    """What a device family lacks: packages that break its images (NPU312)."""

    # Device family -> the FROM tag tokens and SOC_VERSION prefixes that mark an image for it.
    markers: Mapping[str, DeviceMarkers]
    # Device family -> normalised distribution name -> why it does not belong on that device.
    unsupported: Mapping[str, Mapping[str, str]]


@dataclass(frozen=True)
class DeviceMarkers:
    from_tokens: tuple[str, ...]  # tokens of the CANN base image tag (`cann:9.0.0-310p-ubuntu22.04-py3.11`)
    soc_prefixes: tuple[str, ...]  # SOC_VERSION values (lower case) that start with one of these


# -- project ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class VllmCli(Section):
    """vLLM's server options and Python API as the launch rules read them (checks/parsers/vllm_cli.py)."""

    eager_flag: str
    json_options: Mapping[str, str]
    json_only_when_braced: tuple[str, ...]
    optimization_flags: tuple[str, ...]
    no_graph_levels: tuple[str, ...]
    compilation_flags: Mapping[str, str]
    context_parallel_flags: tuple[str, ...]
    torchair_key: str
    yaml_command_keys: tuple[str, ...]
    yaml_env_keys: tuple[str, ...]
    yaml_ascend_markers: tuple[Regex, ...]
    python_calls: tuple[str, ...]
    python_config_classes: Mapping[str, str]


@dataclass(frozen=True)
class Project(Section):
    name: str  # how messages name the project ("<name>'s config")
    requirement_files: tuple[str, ...]  # its own requirement files that `pip install -r <basename>` means
    # Globs of paths that mark a repository as this project (the profile chosen when no config names one).
    looks_like: tuple[str, ...]


@dataclass(frozen=True)
class FileKinds(Section):
    """Path globs of each file kind (checks/kinds.py names the kinds)."""

    shell: tuple[str, ...]
    npu_script: tuple[str, ...]
    workflow: tuple[str, ...]
    ascend_workflow: tuple[str, ...]
    dockerfile: tuple[str, ...]
    ascend_dockerfile: tuple[str, ...]
    docs: tuple[str, ...]
    python: tuple[str, ...]
    requirements: tuple[str, ...]
    hydra_config: tuple[str, ...]


@dataclass(frozen=True)
class Scheme:
    name: str
    role: str
    shape: str
    format: str
    default_backend: str | None = None  # absent: the scheme has no implied backend


@dataclass(frozen=True)
class Lenient:
    fields: Mapping[str, str] = field(default_factory=dict)  # absent: none
    words: Mapping[str, str | None] = field(default_factory=dict)  # absent: none


@dataclass(frozen=True)
class ImageTags(Section):
    devices: tuple[str, ...]
    backends: tuple[str, ...]
    model_markers: tuple[str, ...]
    families: tuple[tuple[str, ...], ...]
    mirrors: Mapping[str, str]
    temporary: tuple[Regex, ...]
    producer_markers: tuple[str, ...]
    text_markers: tuple[str, ...]
    read_always: tuple[str, ...]
    fetch_always: tuple[str, ...]
    tokens: tuple[tuple[str, Regex], ...]
    schemes: tuple[Scheme, ...]
    lenient: Mapping[str, Lenient]
    post_spelling: str


@dataclass(frozen=True)
class Launch(Section):
    rollout_name_key: str
    enforce_eager_key: str
    cudagraph_mode_keys: tuple[str, ...]
    cudagraph_capture_keys: tuple[str, ...]
    rollout_context_parallel_keys: tuple[str, ...]
    cudagraph_mode_default: str
    rollout_task_queue_env: str
    graph_change_title_words: tuple[str, ...]

    @property
    def rollout_root(self) -> str:
        """The root of the trainer's keys that hold the rollout (`actor_rollout_ref.`): a command that sets a key
        under it configures the trainer that has the rollout, and runs it on Ray."""
        return self.rollout_name_key.split(".", 1)[0] + "."


@dataclass(frozen=True)
class Launchers(Section, LauncherDeclarations):
    """What counts as a launch command (the shell views read it; see checks/parsers/sh/launchers.py)."""


@dataclass(frozen=True)
class DockerfileNames(Section):
    device_tokens: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class TwinDrift(Section):
    one_sided: tuple[Regex, ...]
    # OS twins (`Dockerfile` / `Dockerfile.openEuler`): the name suffixes of another OS's twin, the OS words
    # folded before comparing, the instructions compared (the rest is package-manager work that differs by
    # OS), and the lines that belong to one OS only.
    os_suffixes: tuple[str, ...]
    os_tokens: tuple[Regex, ...]
    os_compared: tuple[str, ...]
    os_only: tuple[Regex, ...]


@dataclass(frozen=True)
class DeviceApi(Section):
    index_dirs: tuple[str, ...]
    defaults: Mapping[str, tuple[str, ...]]
    check_script: str
    not_npu_paths: tuple[str, ...]
    vendored_paths: tuple[str, ...]
    cuda_only_imports: tuple[str, ...]
    fix_module: str
    fixes: Mapping[str, str]
    torch_device_fix: str


@dataclass(frozen=True)
class NpuWorkarounds(Section):
    patch_modules: tuple[str, ...]
    patch_calls: tuple[str, ...]
    markers: tuple[Regex, ...]
    nearby_lines: int
    pin_files: tuple[str, ...]


@dataclass(frozen=True)
class RepoLinks(Section):
    repos: tuple[str, ...]
    head_refs: tuple[str, ...]
    check_paths: tuple[str, ...]
    doc_suffixes: tuple[str, ...]
    # With no `check_paths`: every doc that speaks of Ascend is checked (a project nobody wrote a profile for).
    ascend_docs_by_content: bool = False
    # Regular expressions on a link's target path: decorative images whose absence changes no content (the
    # admonition icons of Huawei's documentation converter). A broken one is a notice.
    decorative_images: tuple[str, ...] = ()


@dataclass(frozen=True)
class VersionTables(Section):
    paths: tuple[str, ...]
    history_sections: tuple[str, ...]
    cann_headers: tuple[str, ...]
    device_headers: tuple[str, ...]
    devices: Mapping[str, tuple[str, ...]]
    version_headers: tuple[str, ...]
    update_sections: tuple[str, ...]


@dataclass(frozen=True)
class RunnerLabel:
    device: str
    npus: int


@dataclass(frozen=True)
class AscendRunners(Section):
    labels: Mapping[str, RunnerLabel]
    retired: Mapping[str, str]
    label_pattern: Regex
    families: Mapping[str, str]
    other_patterns: tuple[Regex, ...]
    npu_count_env: tuple[str, ...]
    npu_count_key: str


@dataclass(frozen=True)
class ForkGuard(Section):
    owners: tuple[str, ...]
    secret_pattern: Regex


@dataclass(frozen=True)
class HydraSchema(Section):
    entry_points: Mapping[str, str]
    config_paths: tuple[str, ...]
    files: Mapping[str, str]
    engine_configs: tuple[str, ...]
    model_engine_files: Mapping[str, str]
    free_form: tuple[Regex, ...]


@dataclass(frozen=True)
class AscendValueDocs:
    """Where the project documents each NPU106 case (named in the messages)."""

    sglang_attention: str
    vpp_mbridge: str
    context_parallel: str
    flash_attn: str
    visible_devices: str


@dataclass(frozen=True)
class AscendValues(Section):
    checkpoint_engine_suffix: str
    checkpoint_engine_invalid: Mapping[str, str]
    checkpoint_engine_since: str  # the change of the project that renamed the key ("#5473"; "" when not its own)
    checkpoint_engine_registry_files: tuple[str, ...]
    checkpoint_engine_registry_pattern: Regex
    rollout_name_key: str
    sglang_attention_key: str
    sglang_attention_value: str
    cuda_visible_env: str
    ascend_visible_env: str
    ray_noset_env: str
    device_key: str
    device_invalid: Mapping[str, str]
    vpp_key: str
    mbridge_key: str
    cp_key: str
    cp_transformer_key: str
    megatron_inherits: Mapping[str, str]
    use_mbridge_default: bool | None
    flash_attn_key: str
    torch_compile_key: str
    docs: AscendValueDocs
    message_prefix: str  # the role prefix messages leave out of a key ("" for none)


@dataclass(frozen=True)
class Watched:
    applies_to: Regex


@dataclass(frozen=True)
class DefaultSweep(Section):
    config_globs: tuple[str, ...]
    script_marker: str
    watched: Mapping[str, Watched]
    max_listed: int


@dataclass(frozen=True)
class PublishedTags(Section):
    lists: tuple[str, ...]
    text_markers: tuple[str, ...]
    history_sections: tuple[str, ...]


# -- all of them -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Facts:
    """Every section, read as `ctx.facts.<section>.<field>`. `profile` names the project profile in use."""

    profile: str = field(metadata={"scope": "meta"})
    # universal
    graph_modes: GraphModes = field(metadata=_universal())
    vllm_ascend: VllmAscend = field(metadata=_universal())
    task_queue: TaskQueue = field(metadata=_universal())
    torch_npu_releases: TorchNpuReleases = field(metadata=_sourced())
    torch_torchvision: TorchTorchvision = field(metadata=_sourced())
    published_versions: PublishedVersions = field(metadata=_sourced())
    env_cann: EnvNames = field(metadata=_sourced())
    env_hccl: EnvNames = field(metadata=_sourced())
    env_atb: EnvNames = field(metadata=_sourced())
    env_torch_npu: EnvNames = field(metadata=_sourced())
    env_vllm_ascend: EnvNames = field(metadata=_sourced())
    env_ecosystem: EnvNames = field(metadata=_sourced())
    env_cuda: CudaEnv = field(metadata=_sourced())
    cann_packages: CannPackages = field(metadata=_sourced())
    github_events: GithubEvents = field(metadata=_sourced())
    soc_versions: SocVersions = field(metadata=_universal())
    ascend_names: AscendNames = field(metadata=_universal())
    vllm_ascend_requirements: VllmAscendRequirements = field(metadata=_universal())
    npu_unsupported_packages: NpuUnsupportedPackages = field(metadata=_universal())
    torch_resolvers: TorchResolvers = field(metadata=_universal())
    invisible_unicode: InvisibleUnicode = field(metadata=_universal())
    github_actions: GithubActions = field(metadata=_universal())
    registry_cleanup: RegistryCleanup = field(metadata=_universal())
    framework_pins: FrameworkPins = field(metadata=_universal())
    env_persistence: EnvPersistence = field(metadata=_universal())
    shell_env: ShellEnv = field(metadata=_universal())
    ascend_content: AscendContent = field(metadata=_universal())
    ascend_env: AscendEnv = field(metadata=_universal())
    package_indexes: PackageIndexes = field(metadata=_universal())
    nightly_builds: NightlyBuilds = field(metadata=_universal())
    build_env: BuildEnv = field(metadata=_universal())
    device_packages: DevicePackages = field(metadata=_universal())
    vllm_cli: VllmCli = field(metadata=_universal())
    shell_tools: ShellTools = field(metadata=_universal())
    cann_shell: CannShell = field(metadata=_universal())
    npu_alloc_conf: NpuAllocConf = field(metadata=_universal())
    cuda_habits: CudaHabits = field(metadata=_universal())
    torch_wheels: TorchWheels = field(metadata=_universal())
    guide_components: GuideComponents = field(metadata=_universal())
    ascend_devices: AscendDevices = field(metadata=_universal())
    env_prefixes: EnvPrefixes = field(metadata=_universal())
    apt_lists: AptLists = field(metadata=_universal())
    vllm_engine_values: VllmEngineValues = field(metadata=_universal())
    ascend_additional_config: AscendAdditionalConfig = field(metadata=_universal())
    event_text: EventText = field(metadata=_universal())
    cmake_definitions: CMakeDefinitions = field(metadata=_universal())
    image_programs: ImagePrograms = field(metadata=_universal())
    python_packaging: PythonPackaging = field(metadata=_universal())
    device_defaults: DeviceDefaults = field(metadata=_universal())
    # project
    project: Project = field(metadata=_project())
    file_kinds: FileKinds = field(metadata=_project())
    image_tags: ImageTags = field(metadata=_project())
    launch: Launch = field(metadata=_project())
    launchers: Launchers = field(metadata=_project())
    dockerfile_names: DockerfileNames = field(metadata=_project())
    twin_drift: TwinDrift = field(metadata=_project())
    device_api: DeviceApi = field(metadata=_project())
    npu_workarounds: NpuWorkarounds = field(metadata=_project())
    repo_links: RepoLinks = field(metadata=_project())
    version_tables: VersionTables = field(metadata=_project())
    ascend_runners: AscendRunners = field(metadata=_project())
    fork_guard: ForkGuard = field(metadata=_project())
    hydra_schema: HydraSchema = field(metadata=_project())
    ascend_values: AscendValues = field(metadata=_project())
    default_sweep: DefaultSweep = field(metadata=_project())
    published_tags: PublishedTags = field(metadata=_project())


def sections(scope: str) -> tuple[str, ...]:
    """The section names of one scope (UNIVERSAL or PROJECT), in declaration order."""
    return tuple(f.name for f in fields(Facts) if f.metadata.get("scope") == scope)


def sourced_sections() -> tuple[str, ...]:
    """The universal sections bench/facts/refresh.py writes (checks/facts/sourced.json), in declaration order."""
    return tuple(f.name for f in fields(Facts) if f.metadata.get("sourced"))


# -- appended sections (shell rules NPU114-NPU120, NPU317) ------------------------------------------------------


@dataclass(frozen=True)
class ShellTools(Section):
    subcommands: Mapping[str, tuple[str, ...]]
    pip_install_value_options: tuple[str, ...]
    pip_index_options: tuple[str, ...]
    config_file_options: tuple[str, ...]
    git_clone_value_options: tuple[str, ...]


@dataclass(frozen=True)
class CannShell(Section):
    nounset_aborts: tuple[Regex, ...]
    nounset_names: tuple[str, ...]
    toolkit_env_sets: tuple[str, ...]  # the variables the toolkit's set_env.sh sets (nothing else changes)


@dataclass(frozen=True)
class NpuAllocConf(Section):
    """torch_npu's caching-allocator settings: `key:value,key:value` in the variables named."""

    variables: tuple[str, ...]
    keys: tuple[str, ...]  # every key some torch_npu release accepts (any other one stops the process)
    bool_keys: tuple[str, ...]  # keys whose value must be exactly `True` or `False`


@dataclass(frozen=True)
class GpuValues:
    """The values of one setting that name a GPU-only implementation, and what they do on NPU."""

    values: tuple[str, ...]  # compared without regard to case
    why: str  # the message's ending


@dataclass(frozen=True)
class CudaHabits(Section):
    # "tool [subcommand]" -> option -> why it is a GPU habit on NPU (the message's ending)
    gpu_options: Mapping[str, Mapping[str, str]]
    # a variable, or "tool [subcommand] option" -> the values that name a GPU-only implementation
    gpu_values: Mapping[str, GpuValues]


@dataclass(frozen=True)
class AptLists(Section):
    """Base images that ship without apt's package lists (NPU322)."""

    empty_images: tuple[str, ...]  # regular expressions searched in the image name (no tag)


@dataclass(frozen=True)
class ImageFamily:
    """Base images one Dockerfile builds (NPU323): which of the checked programs they ship."""

    name: str  # for messages: "CANN 8.0.0-8.2.rc1.alpha002 on Ubuntu"
    repository: Regex  # searched in the image name (no tag)
    tag: Regex  # the whole tag matches it (case-insensitive)
    ships: tuple[str, ...]  # checked programs every published build of these tags has on PATH
    unknown: tuple[str, ...] = ()  # checked programs the sources cannot tell about (never reported)


@dataclass(frozen=True)
class ImagePrograms(Section):
    """Programs an image build runs that the base image may not have (NPU323)."""

    # program -> package names (apt, yum/dnf, pip) whose installation puts it on PATH, itself or as a dependency
    programs: Mapping[str, tuple[str, ...]]
    # program -> packages that bring it only as a recommendation (apt-get install without --no-install-recommends)
    recommended_by: Mapping[str, tuple[str, ...]]
    rpm_names: Mapping[str, str]  # program -> the rpm package to install when it is not the program's name
    images: tuple[ImageFamily, ...]


@dataclass(frozen=True)
class EventText(Section):
    """Expressions whose value is text from the event payload (NPU115: pasted into a `run:` script)."""

    json_contexts: tuple[str, ...]  # contexts whose `toJSON(...)` is the payload or a part of it
    free_text_fields: tuple[str, ...]  # last keys of `github.event.<...>` whose value a person wrote


@dataclass(frozen=True)
class CMakeDefinitions(Section):
    """CMake cache definitions a build passes (`-D<NAME>=<value>`, NPU122): the names CMake or its find modules
    read themselves, which a project's own CMake files need not mention."""

    predefined_prefixes: tuple[str, ...]  # a name starting so is CMake's or a find module's (`CMAKE_BUILD_TYPE`)
    predefined_names: tuple[str, ...]  # whole names CMake itself reads (`BUILD_SHARED_LIBS`)
    predefined_suffixes: tuple[str, ...]  # find_package() hints (`Torch_DIR`, `ZLIB_ROOT`)


@dataclass(frozen=True)
class DeviceFamily:
    """The values of one kind of device option: the Ascend one(s) and the other devices'."""

    ascend: tuple[Regex, ...]
    other: tuple[Regex, ...]


@dataclass(frozen=True)
class DeviceDefaults(Section):
    """The device a Python entry script runs on when its launcher passes no option (NPU107)."""

    families: Mapping[str, DeviceFamily]  # family -> its values (whole, case-insensitive)
    device_keywords: tuple[str, ...]  # keyword arguments that hard-code a script's device
    device_calls: tuple[str, ...]  # calls (last name) whose first argument hard-codes it


@dataclass(frozen=True)
class PythonPackaging(Section):
    """What makes setuptools ship a folder that `packages` does not list (NPU404)."""

    # setuptools plugins that list every file under version control (the `setuptools.file_finders` entry
    # point): with include_package_data, an unlisted subpackage's files are shipped as package data.
    file_finder_plugins: tuple[str, ...]  # PyPI names, compared with `-`, `_` and case folded


@dataclass(frozen=True)
class EnvPrefixes(Section):
    """Variables of an upstream package that an Ascend family extends (NPU110: a dropped family)."""

    # upstream prefix -> the Ascend family that extends it (`VLLM_` -> `VLLM_ASCEND_`)
    dropped_family: Mapping[str, str]
    upstream: tuple[str, ...]  # the upstream package's own variables under those prefixes


@dataclass(frozen=True)
class TorchWheels(Section):
    """Where pip finds what an Ascend image installs (NPU506): the PyTorch CPU index, and what pulls torch."""

    cpu_index: str
    local_version_hosts: tuple[str, ...]
    torch_family: tuple[str, ...]
    pulls_torch: tuple[str, ...]
    pulls_torch_repos: tuple[str, ...]


# -- appended sections (universal) ------------------------------------------------------------------------------


@dataclass(frozen=True)
class GuideComponents(Section):
    """How install guides name the components of an Ascend stack (analysis.guides)."""

    names: Mapping[str, tuple[str, ...]]  # component -> names in tables (lower case, version words cut)
    repos: Mapping[str, tuple[str, ...]]  # component -> git repositories that install it (last URL segment)
    exact: tuple[str, ...]  # components whose tables state a full release (others: major.minor)
    current_rows: tuple[str, ...]  # release-row labels that mean "what the commands install now"
    branch_names: tuple[str, ...]  # column names of a torch_npu release branch (`v2.7.1-7.2.0`)
    drop_words: tuple[str, ...]  # words cut from a table name before it is looked up (`版本`, `version`)
    doc_version_pattern: Regex  # a CANN documentation URL's version segment (`canncommercial/83RC2/`)


@dataclass(frozen=True)
class AscendDevices(Section):
    """Ascend devices as launch commands and docs meet them (NPU228, NPU229)."""

    node_npus: Mapping[str, int]  # device -> NPUs one server node shows a process (chips; dies on A3)
    max_node_npus: int  # the most any Ascend server node has
    doc_names: Mapping[str, tuple[str, ...]]  # device -> how docs name it (lower case, whole words)
    tag_tokens: Mapping[str, tuple[str, ...]]  # device -> its token in an image tag (split on `-`)
    parallel_keys: tuple[str, ...]  # launcher config keys (last part) that each need that many NPUs
    model_parallel_keys: tuple[str, ...]  # of those, the ones whose product one model replica needs


@dataclass(frozen=True)
class VllmEngineValues(Section):
    """vLLM engine options that take one of a closed set of values (NPU106 (i))."""

    # option (as `vllm serve` spells it; a Python keyword reads as the option) -> every value vLLM accepts
    closed: Mapping[str, tuple[str, ...]]
    # of those, options that also take the import path of a class (`my_pkg.executor.MyExecutor`)
    import_path: tuple[str, ...]


@dataclass(frozen=True)
class AscendAdditionalConfig(Section):
    """Where vLLM-Ascend reads the keys of `--additional-config` (NPU106 (j))."""

    # the repository's own reader of the config (vLLM-Ascend itself): read in place of `nested_only` when present
    registry_files: tuple[str, ...]
    # sub-config -> keys vLLM-Ascend reads only inside it, never at the top level (in no release)
    nested_only: Mapping[str, tuple[str, ...]]
    # key -> its default where it is read (keys of one sub-config only): a top-level copy of it changes nothing
    defaults: Mapping[str, bool] = field(default_factory=dict)
