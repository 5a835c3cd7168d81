package main

import "os"

// dieBy kills this process: Windows has no signals to die by.
func dieBy(int) {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Kill()
	}
}
