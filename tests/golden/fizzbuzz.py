"""Everything at once: a for loop over a range with an elif chain of prints."""


def fizzbuzz(n):
    count = 0
    for i in range(1, n + 1):
        if i % 15 == 0:
            print("FizzBuzz")
        elif i % 3 == 0:
            print("Fizz")
        elif i % 5 == 0:
            print("Buzz")
        else:
            print(i)
            count += 1
    return count
