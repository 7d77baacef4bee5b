# Offline compilation of kernel modules: one code object per module.
#   amd:    clang -x hip --cuda-device-only -> clang offload bundle (.hsaco) with one entry per
#           target in HKB_AMDGPU_TARGETS, entries aligned to 4096 bytes.
#   nvidia: nvcc -fatbin -> one fatbin (.fatbin) with SASS for each of HKB_CUDA_ARCHS.
# Each module is its own custom command with a depfile, so editing one module rebuilds only it.

set(HKB_KERNEL_DIR "${PROJECT_SOURCE_DIR}/kernels")
set(HKB_BUNDLE_BUILD_DIR "${PROJECT_BINARY_DIR}/bundle")
file(MAKE_DIRECTORY "${HKB_BUNDLE_BUILD_DIR}")

if(HKB_GPU_PLATFORM STREQUAL "amd")
  set(HKB_BUNDLE_SUFFIX ".hsaco")
  find_program(HKB_HIP_CLANG NAMES clang++-15 clang++
    HINTS /opt/rocm/llvm/bin /opt/rocm/lib/llvm/bin /usr/lib/llvm-15/bin
    DOC "clang++ with the AMDGPU backend, used to compile kernels/*.hip")
  if(NOT HKB_HIP_CLANG)
    message(FATAL_ERROR "HKB_GPU_PLATFORM=amd needs clang++ with AMDGPU support (Debian: "
                        "apt-get install hipcc libamdhip64-dev rocm-device-libs).")
  endif()
  find_path(HKB_ROCM_DEVICE_LIB_PATH NAMES ocml.bc
    PATHS /usr/lib/x86_64-linux-gnu/amdgcn/bitcode /opt/rocm/amdgcn/bitcode
          /opt/rocm/lib/llvm/lib/clang/*/lib/amdgcn/bitcode
    DOC "directory holding ROCm's device libraries (ocml.bc, ockl.bc, ...)")
  if(NOT HKB_ROCM_DEVICE_LIB_PATH)
    message(FATAL_ERROR "ROCm device libraries (ocml.bc) not found: install rocm-device-libs or "
                        "set HKB_ROCM_DEVICE_LIB_PATH.")
  endif()
  set(HKB_ROCM_PATH "/usr" CACHE PATH "ROCm installation root passed to clang as --rocm-path")

  # Reject unknown targets now, with the compiler's own words, instead of failing in the build.
  set(_probe "${PROJECT_BINARY_DIR}/hkb_target_probe.hip")
  file(WRITE "${_probe}" "")
  foreach(target IN LISTS HKB_AMDGPU_TARGETS)
    if(NOT DEFINED HKB_TARGET_OK_${target})
      execute_process(
        COMMAND "${HKB_HIP_CLANG}" -x hip --cuda-device-only -nogpulib -nogpuinc
                "--offload-arch=${target}" -c "${_probe}" -o /dev/null
        RESULT_VARIABLE _rc ERROR_VARIABLE _err OUTPUT_QUIET)
      if(NOT _rc EQUAL 0)
        string(STRIP "${_err}" _err)
        message(FATAL_ERROR "HKB_AMDGPU_TARGETS: '${target}' is not a target ${HKB_HIP_CLANG} "
                            "can build (${_err}). Use targets this toolchain knows (Debian's "
                            "ROCm 5.2 clang: gfx803 gfx900 gfx906 gfx908 gfx90a gfx90c gfx940 "
                            "gfx1010 gfx1030 gfx1031), or a newer ROCm for gfx942/gfx1100+.")
      endif()
      set(HKB_TARGET_OK_${target} TRUE CACHE INTERNAL "")
    endif()
  endforeach()

  set(HKB_KERNEL_FLAGS -x hip --cuda-device-only --gpu-bundle-output -O3 -std=c++17
      "--rocm-path=${HKB_ROCM_PATH}" "--hip-device-lib-path=${HKB_ROCM_DEVICE_LIB_PATH}"
      -mllvm -amdgpu-early-inline-all=true -mllvm -amdgpu-function-calls=false
      -Wall -Werror=return-type "-I${HKB_KERNEL_DIR}")
  foreach(target IN LISTS HKB_AMDGPU_TARGETS)
    list(APPEND HKB_KERNEL_FLAGS "--offload-arch=${target}")
  endforeach()
  set(HKB_KERNEL_COMPILER "${HKB_HIP_CLANG}")
elseif(HKB_GPU_PLATFORM STREQUAL "nvidia")
  set(HKB_BUNDLE_SUFFIX ".fatbin")
  find_program(HKB_NVCC NAMES nvcc HINTS /usr/local/cuda/bin ENV CUDA_PATH PATH_SUFFIXES bin
    DOC "nvcc used to compile kernels/*.hip for the NVIDIA test vehicle")
  if(NOT HKB_NVCC)
    message(FATAL_ERROR "HKB_GPU_PLATFORM=nvidia needs nvcc (set HKB_NVCC)")
  endif()
  set(HKB_KERNEL_FLAGS -x cu -std=c++17 -O3 -fatbin --expt-relaxed-constexpr
      -Werror=all-warnings "-I${HKB_KERNEL_DIR}")
  foreach(arch IN LISTS HKB_CUDA_ARCHS)
    list(APPEND HKB_KERNEL_FLAGS "-gencode=arch=compute_${arch},code=sm_${arch}")
  endforeach()
  # Uncompressed cubins, so that `hkb check` can read every kernel's parameter layout (nvcc 13
  # compresses large entries with zstd by default). Older nvcc without the option keep their
  # default, and `hkb check` then reports the entries it could not read.
  if(NOT DEFINED HKB_NVCC_NO_COMPRESS)
    set(_probe "${PROJECT_BINARY_DIR}/nvcc_compress_probe.cu")
    file(WRITE "${_probe}" "__global__ void hkb_probe() {}\n")
    execute_process(COMMAND "${HKB_NVCC}" --no-compress -fatbin "${_probe}"
                            -o "${PROJECT_BINARY_DIR}/nvcc_compress_probe.fatbin"
                    RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
    if(_rc EQUAL 0)
      set(HKB_NVCC_NO_COMPRESS TRUE CACHE INTERNAL "")
    else()
      set(HKB_NVCC_NO_COMPRESS FALSE CACHE INTERNAL "")
    endif()
  endif()
  if(HKB_NVCC_NO_COMPRESS)
    list(APPEND HKB_KERNEL_FLAGS --no-compress)
  endif()
  set(HKB_KERNEL_COMPILER "${HKB_NVCC}")
elseif(HKB_GPU_PLATFORM STREQUAL "cpu")
  set(HKB_BUNDLE_SUFFIX ".cpu")
else()
  message(FATAL_ERROR "HKB_GPU_PLATFORM must be 'amd', 'nvidia' or 'cpu', not '${HKB_GPU_PLATFORM}'")
endif()

# The AMD code path on the host (kernels/common/platform_cpu.h): per module one shared object
# per wave width, archived together as <module>.cpu (members cpu-wave64, cpu-wave32). The cpu
# flavour builds only these; a GPU flavour builds them beside its own with -DHKB_CPU_MODULES=ON
# (the tests' own CPU module uses the flags in every flavour).
set(HKB_CPU_WAVE_SIZES "64;32" CACHE STRING "Wave widths CPU modules are built for (64 and/or 32)")
foreach(w IN LISTS HKB_CPU_WAVE_SIZES)
  if(NOT w MATCHES "^(64|32)$")
    message(FATAL_ERROR "HKB_CPU_WAVE_SIZES: '${w}' is not a wave width (64 or 32)")
  endif()
endforeach()
# -ffunction-sections and --emit-relocs keep every call and thread-local reference in the module
# (the assembler resolves a call within one section itself): loader/cpu_shared.hpp reads them.
set(HKB_CPU_KERNEL_FLAGS -x c++ -std=c++17 -O1 -g0 -fPIC -shared -fvisibility=hidden
    -ffunction-sections -Wl,-z,defs -Wl,--emit-relocs -Wall -Werror=return-type -Wno-unknown-pragmas
    -DHKB_PLATFORM_CPU "-I${HKB_KERNEL_DIR}")
if(HKB_CPU_UCONTEXT)
  list(APPEND HKB_CPU_KERNEL_FLAGS -DHKB_CPU_FIBER_UCONTEXT)
endif()
find_program(HKB_AR NAMES ar REQUIRED)

# Compute units of the target each CPU width stands for: gfx90a (MI250X die) and gfx1030; the
# CPU runtime reports the same counts (loader/CMakeLists.txt).
if(HKB_MULTIPROCESSORS)
  set(HKB_CPU_CUS_WAVE64 ${HKB_MULTIPROCESSORS})
  set(HKB_CPU_CUS_WAVE32 ${HKB_MULTIPROCESSORS})
else()
  set(HKB_CPU_CUS_WAVE64 110)
  set(HKB_CPU_CUS_WAVE32 80)
endif()

# Work splits size their busy blocks by the multiprocessor count (kernels/common/platform.h): the
# loader writes the device's into each module; code objects loaded without hkb fall back to
# NVIDIA's %nsmid or an AMD per-target guess, unless this names the count.
set(HKB_MULTIPROCESSORS "" CACHE STRING
  "Compute units of the AMD GPU the bundle is for (empty: a per-target default)")
if(HKB_MULTIPROCESSORS)
  if(NOT HKB_MULTIPROCESSORS MATCHES "^[1-9][0-9]*$")
    message(FATAL_ERROR "HKB_MULTIPROCESSORS must be a positive integer, not '${HKB_MULTIPROCESSORS}'")
  endif()
  if(NOT HKB_GPU_PLATFORM STREQUAL "cpu")
    list(APPEND HKB_KERNEL_FLAGS "-DHKB_MULTIPROCESSORS=${HKB_MULTIPROCESSORS}")
  endif()
endif()

# hkb_add_kernel_module(<module>): compile kernels/<module>.hip into bundle/<module><suffix>.
function(hkb_add_kernel_module module)
  set(src "${HKB_KERNEL_DIR}/${module}.hip")
  if(NOT EXISTS "${src}")
    message(FATAL_ERROR "manifests/${module}.json has no kernels/${module}.hip")
  endif()
  set(out "${HKB_BUNDLE_BUILD_DIR}/${module}${HKB_BUNDLE_SUFFIX}")
  if(HKB_GPU_PLATFORM STREQUAL "cpu")
    hkb_add_cpu_module(${module} "${src}" "${out}")
    return()
  endif()
  if(HKB_CPU_MODULES)
    hkb_add_cpu_module(${module} "${src}" "${HKB_BUNDLE_BUILD_DIR}/${module}.cpu")
  endif()
  set(dep "${PROJECT_BINARY_DIR}/kernel-deps/${module}.d")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${PROJECT_BINARY_DIR}/kernel-deps"
    COMMAND "${HKB_KERNEL_COMPILER}" ${HKB_KERNEL_FLAGS} -MD -MF "${dep}" "${src}" -o "${out}"
    DEPENDS "${src}"
    DEPFILE "${dep}"
    COMMENT "Compiling kernel module ${module} (${HKB_GPU_PLATFORM})"
    VERBATIM COMMAND_EXPAND_LISTS)
  set_property(GLOBAL APPEND PROPERTY HKB_BUNDLE_FILES "${out}")
endfunction()

# The cpu flavour's module: a translation unit that includes kernels/<module>.hip and exports a
# parameter unpacker per manifest kernel, compiled once per wave width and archived.
function(hkb_add_cpu_module module src out)
  file(READ "${PROJECT_SOURCE_DIR}/manifests/${module}.json" text)
  string(JSON count LENGTH "${text}" kernels)
  set(body "// Generated by cmake/HkbKernels.cmake from manifests/${module}.json.\n")
  string(APPEND body "#include \"common/platform.h\"\n")
  # Dynamic shared memory (`extern __shared__ T name[];` in an unnamed namespace) gets AMD's
  # 64 KiB per block as thread-local storage.
  file(STRINGS "${src}" externs REGEX "extern __shared__")
  set(extra "")
  if(externs)
    set(extra -fno-extern-tls-init)  # it has no dynamic initialiser (GCC emits a call otherwise)
  endif()
  set(dynamic "")
  foreach(line IN LISTS externs)
    if(NOT line MATCHES "extern __shared__ ([A-Za-z0-9_:]+) ([A-Za-z0-9_]+)\\[\\];")
      message(FATAL_ERROR "${src}: cannot read the dynamic shared array in '${line}'")
    endif()
    string(APPEND body "namespace { alignas(16) thread_local ${CMAKE_MATCH_1} "
                       "${CMAKE_MATCH_2}[hkb_cpu::kSharedLimit / sizeof(${CMAKE_MATCH_1})]; }\n")
    string(APPEND dynamic " ${CMAKE_MATCH_2}")
  endforeach()
  # The loader counts every other thread-local a kernel reaches as static shared memory
  # (loader/cpu_shared.hpp).
  string(APPEND body "HKB_CPU_EXPORT const char hkb_cpu_dynamic_shared[] = \"${dynamic}\";\n")
  string(APPEND body "#include \"${src}\"\nHKB_CPU_MODULE\n")
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    string(JSON name GET "${text}" kernels ${i} name)
    string(APPEND body "HKB_CPU_KERNEL(${name})\n")
  endforeach()
  set(tu "${PROJECT_BINARY_DIR}/cpu-src/${module}.cpp")
  file(CONFIGURE OUTPUT "${tu}" CONTENT "${body}")
  set(parts "")
  foreach(w IN LISTS HKB_CPU_WAVE_SIZES)
    set(cus ${HKB_CPU_CUS_WAVE${w}})
    set(so "${HKB_BUNDLE_BUILD_DIR}/wave${w}/${module}.so")
    set(part "${HKB_BUNDLE_BUILD_DIR}/${module}.parts/cpu-wave${w}")
    set(dep "${PROJECT_BINARY_DIR}/kernel-deps/${module}-wave${w}.d")
    add_custom_command(
      OUTPUT "${so}"
      COMMAND "${CMAKE_COMMAND}" -E make_directory "${PROJECT_BINARY_DIR}/kernel-deps"
              "${HKB_BUNDLE_BUILD_DIR}/wave${w}"
      COMMAND "${CMAKE_CXX_COMPILER}" ${HKB_CPU_KERNEL_FLAGS} ${extra} -DHKB_WAVE_SIZE=${w}
              -DHKB_MULTIPROCESSORS=${cus} -MD -MF "${dep}" "${tu}" -o "${so}"
      DEPENDS "${tu}" "${src}"
      DEPFILE "${dep}"
      COMMENT "Compiling kernel module ${module} (cpu, wave ${w})"
      VERBATIM COMMAND_EXPAND_LISTS)
    add_custom_command(OUTPUT "${part}" DEPENDS "${so}"
      COMMAND "${CMAKE_COMMAND}" -E copy "${so}" "${part}" VERBATIM)
    list(APPEND parts "${part}")
  endforeach()
  add_custom_command(
    OUTPUT "${out}"
    COMMAND "${CMAKE_COMMAND}" -E rm -f "${out}"
    COMMAND "${HKB_AR}" qcS "${out}" ${parts}
    DEPENDS ${parts}
    COMMENT "Archiving kernel module ${module} (cpu: ${HKB_CPU_WAVE_SIZES})"
    VERBATIM COMMAND_EXPAND_LISTS)
  set_property(GLOBAL APPEND PROPERTY HKB_BUNDLE_FILES "${out}")
endfunction()

# Reads manifests/*.json: the module list of the build, and one combined manifest the library
# embeds. A manifest whose "module" does not match its file name stops the configure.
function(hkb_collect_manifests out_modules out_combined)
  file(GLOB manifest_files CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/manifests/*.json")
  list(SORT manifest_files)
  set(modules "")
  set(parts "")
  foreach(f IN LISTS manifest_files)
    get_filename_component(stem "${f}" NAME_WE)
    file(READ "${f}" text)
    string(JSON name ERROR_VARIABLE err GET "${text}" module)
    if(err)
      message(FATAL_ERROR "${f}: not a module manifest (${err})")
    endif()
    if(NOT name STREQUAL stem)
      message(FATAL_ERROR "${f}: \"module\" is '${name}', expected '${stem}'")
    endif()
    if(HKB_MODULES AND NOT name IN_LIST HKB_MODULES)
      continue()
    endif()
    list(APPEND modules "${name}")
    string(STRIP "${text}" text)
    list(APPEND parts "${text}")
  endforeach()
  list(JOIN parts ",\n" joined)
  set(combined "${PROJECT_BINARY_DIR}/manifest/hkb-manifest.json")
  file(WRITE "${combined}.tmp" "{\"format\": 1, \"modules\": [\n${joined}\n]}\n")
  file(COPY_FILE "${combined}.tmp" "${combined}" ONLY_IF_DIFFERENT)
  set(${out_modules} "${modules}" PARENT_SCOPE)
  set(${out_combined} "${combined}" PARENT_SCOPE)
endfunction()
