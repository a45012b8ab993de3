module trit

go 1.26
