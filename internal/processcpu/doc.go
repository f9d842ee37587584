// Package processcpu reads the CPU time the process has used, user and
// system, across all its threads (getrusage(2)): what the benchmarks and
// the load bench report as CPU per request, so that work moved to another
// goroutine or core, or to the garbage collector, is still counted.
package processcpu
