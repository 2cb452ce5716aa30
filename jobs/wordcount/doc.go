// Package wordcount is the word count job: split lines into words as
// strings.Fields does, and count each word over the whole input (a global
// window per word, which fires when the input ends). Reference is the plain
// sequential computation tests compare it with.
package wordcount
