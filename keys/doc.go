// Package keys builds PartitionKey and RowKey strings that sort the way the
// values they encode sort (design guide §2, §6.6 compound keys, §6.7 log tail,
// §6.12 prepend/append anti-pattern).
package keys
