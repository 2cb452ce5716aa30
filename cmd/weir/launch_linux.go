package main

import "syscall"

// childAttr makes a launched process die with launch, however launch
// ends, and puts it in a process group of its own, so that a Ctrl-C at the
// terminal reaches launch alone, which stops the processes once.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
