# Makes the deploy tarball: what a Jetson needs to run plans and build programs against the
# runtime, without the converter. Run by the `deploy` target (CMakeLists.txt), or directly:
#   cmake -DSETTINGS=FILE -P cmake/deploy.cmake
# FILE sets BUILD_DIR (a built build tree), SOURCE_DIR, NAME (the folder inside the tarball,
# e.g. jetplan-0.1.0-aarch64), OUTPUT (the .tar.gz), VERSION, ARCH, LIBDIR, OBJDUMP (the
# target's objdump, may be empty) and PLANS (a list of .jplan files, may be empty).
#
# The tarball holds NAME/ with the `runtime` and `devel` install components (bin/jetplan-run,
# bin/jetplan-inspect, libjetplan.so and .a, include/jetplan, the CMake and pkg-config files),
# plans/ with each plan of PLANS, and README.md (cmake/deploy_README.md.in) saying how to run it.
cmake_minimum_required(VERSION 3.22)
if(NOT SETTINGS)
  message(FATAL_ERROR "deploy.cmake: give -DSETTINGS=FILE (the deploy target writes one)")
endif()
include(${SETTINGS})

# Every plan first, so that a missing one fails before anything is written.
set(plan_names "")
foreach(plan IN LISTS PLANS)
  if(NOT IS_ABSOLUTE "${plan}" OR NOT EXISTS "${plan}" OR IS_DIRECTORY "${plan}")
    message(FATAL_ERROR "deploy: JETPLAN_DEPLOY_PLANS names '${plan}', which is not an existing "
                        "plan file (an absolute path; convert it first, e.g. jetplan-convert "
                        "model.onnx -o model.jplan --target orin-agx)")
  endif()
  get_filename_component(name "${plan}" NAME)
  if(name IN_LIST plan_names)
    message(FATAL_ERROR "deploy: two plans named '${name}' in JETPLAN_DEPLOY_PLANS; they would "
                        "overwrite each other in plans/")
  endif()
  list(APPEND plan_names "${name}")
endforeach()

get_filename_component(stage_parent "${OUTPUT}" DIRECTORY)
set(stage_parent "${stage_parent}/deploy-stage")
set(stage "${stage_parent}/${NAME}")
file(REMOVE_RECURSE "${stage_parent}")
foreach(component IN ITEMS runtime devel)
  execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${stage}
                          --component ${component}
                  OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
endforeach()
foreach(plan IN LISTS PLANS)
  file(COPY "${plan}" DESTINATION "${stage}/plans")
endforeach()

# The newest glibc and libstdc++ symbol versions the binaries need: the device's must be as new
# (a cross build links against the build host's aarch64 libraries, not the Jetson's).
set(REQUIREMENTS "")
if(OBJDUMP)
  file(GLOB binaries "${stage}/bin/*" "${stage}/${LIBDIR}/libjetplan.so.*.*")
  foreach(library IN ITEMS GLIBC GLIBCXX)
    set(newest "")
    foreach(binary IN LISTS binaries)
      execute_process(COMMAND ${OBJDUMP} -T ${binary} OUTPUT_VARIABLE symbols ERROR_QUIET)
      string(REGEX MATCHALL "${library}_[0-9.]+" versions "${symbols}")
      foreach(v IN LISTS versions)
        string(REPLACE "${library}_" "" v "${v}")
        if(NOT newest OR v VERSION_GREATER newest)
          set(newest "${v}")
        endif()
      endforeach()
    endforeach()
    set(newest_${library} "${newest}")
  endforeach()
  if(newest_GLIBC)
    set(REQUIREMENTS "The programs need glibc ${newest_GLIBC} or newer on the device (`ldd --version`)")
    if(newest_GLIBCXX)
      string(APPEND REQUIREMENTS " and a libstdc++ with GLIBCXX_${newest_GLIBCXX}")
    endif()
    string(APPEND REQUIREMENTS ": they were linked against the build machine's libraries. "
           "For an older system, cross-build against a copy of the device's root file system "
           "(`-DJETPLAN_SYSROOT=DIR` with toolchains/aarch64-jetson.cmake) or build on the device.\n")
  endif()
endif()

# README.md: @PLAN_LINES@ lists the plans, @FIRST_PLAN@ is the one the commands use.
set(PLAN_LINES "")
foreach(name IN LISTS plan_names)
  string(APPEND PLAN_LINES "        ${name}\n")
endforeach()
if(plan_names)
  list(GET plan_names 0 FIRST_PLAN)
else()
  set(PLAN_LINES "        (none: set JETPLAN_DEPLOY_PLANS and build the deploy target again)\n")
  set(FIRST_PLAN "model.jplan")
endif()
configure_file(${SOURCE_DIR}/cmake/deploy_README.md.in ${stage}/README.md @ONLY)

file(REMOVE "${OUTPUT}")
execute_process(COMMAND ${CMAKE_COMMAND} -E tar czf ${OUTPUT} ${NAME}
                WORKING_DIRECTORY ${stage_parent} COMMAND_ERROR_IS_FATAL ANY)
file(REMOVE_RECURSE "${stage_parent}")
list(LENGTH plan_names plan_count)
file(SIZE "${OUTPUT}" bytes)
math(EXPR kib "${bytes} / 1024")
message(STATUS "deploy: ${OUTPUT} (${NAME}/, ${plan_count} plans, ${kib} KiB)")
