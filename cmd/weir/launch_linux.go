package main

import "syscall"

// childAttr makes a launched process die with launch, however launch ends.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
