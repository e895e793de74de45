// ascendopt AscendC emulation: the run-time knob values of a parametrised
// host build. The build rewrites each `constexpr T NAME = V; //
// ascendopt:knob ...` line of op_host into a macro reading knob K from here,
// so that one compiled host library serves every Stage II assignment; the
// values come from ASCENDOPT_HOST_KNOBS (comma-separated, in knob order),
// which the worker sets for the job (runtime_src/host_entry.cpp reads it).
#ifndef ASCENDOPT_HOST_KNOB_VALUE_H
#define ASCENDOPT_HOST_KNOB_VALUE_H

extern "C" long long ascendopt_knob_value(int index);

#endif
