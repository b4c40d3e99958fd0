<?php
// Shared by the PHP drivers: settings, checks, the bodies the shops send, and the customer's side
// of a card payment (the vault and the 3-D Secure pages, which no SDK calls).
define('BASE', rtrim(getenv('TENDER_URL') ?: 'http://127.0.0.1:8080', '/'));
define('KEY', getenv('TENDER_KEY') ?: '');
if (KEY === '') { fwrite(STDERR, "TENDER_KEY is not set\n"); exit(2); }

$failed = 0;
function check(string $name, bool $ok): void
{
    global $failed;
    echo ($ok ? 'ok   ' : 'FAIL ') . $name . "\n";
    if (!$ok) $failed++;
}
function finish(): void
{
    global $failed;
    echo $failed ? "$failed failed\n" : "all passed\n";
    exit($failed ? 1 : 0);
}

/** The README's order, optionally a pre-authorization or with a customer locale. */
function readmeOrder(?string $captureMode = null, ?string $locale = null): array
{
    $txn = ['payment_method' => 'credit-card'];
    if ($captureMode) $txn['capture_mode'] = $captureMode;
    $order = [
        'merchant_order_id' => 'my-custom-order-id-12345',
        'currency' => 'EUR',
        'amount' => 2500,
        'description' => 'Purchase order 12345',
        'return_url' => 'https://www.example.com',
        'transactions' => [$txn],
    ];
    if ($locale) $order['customer'] = ['locale' => $locale];
    return $order;
}

/** A guest's order as the WooCommerce plugin builds it (array_filter keeps [""] phone numbers). */
function wooOrder(): array
{
    return [
        'merchant_order_id' => '1234',
        'customer' => array_filter([
            'address_type' => 'customer',
            'merchant_customer_id' => 0,
            'email_address' => 'anne-marie@example.nl',
            'first_name' => 'Anne-Marie',
            'last_name' => 'Wałęsa',
            'address' => 'Kerkstraat 12/3  1012ab Amsterdam',
            'postal_code' => '1012ab',
            'country' => 'NL',
            'phone_numbers' => [''],
            'user_agent' => 'Mozilla/5.0',
            'ip_address' => '203.0.113.7',
            'locale' => 'nl_NL',
            'birthdate' => '',
            'additional_addresses' => [['address_type' => 'billing', 'address' => 'Kerkstraat 12/3  Amsterdam', 'country' => 'NL', 'postal_code' => '1012ab']],
        ]),
        'currency' => 'EUR',
        'client' => ['user_agent' => 'Mozilla/5.0', 'platform_name' => 'WooCommerce', 'platform_version' => '8.9.3', 'plugin_name' => 'emspay-online-woocommerce', 'plugin_version' => '1.4.3'],
        'amount' => 2915,
        'description' => 'Your order 1234',
        'return_url' => 'https://shop.example/?wc-api=woocommerce_ginger',
        'webhook_url' => 'https://shop.example/?wc-api=woocommerce_ginger',
        'extra' => [],
        'order_lines' => [['name' => 'Mug', 'type' => 'physical', 'amount' => 1210, 'currency' => 'EUR', 'quantity' => 2, 'vat_percentage' => 2100, 'merchant_order_line_id' => '17']],
        'transactions' => [array_filter(['payment_method' => 'credit-card', 'payment_method_details' => []])],
    ];
}

/**
 * PAY_IN_BROWSER set: the customer acts in a real browser driven by the caller
 * (scripts/compat/sdk-browser.test.ts). Asks on stdout (`PAY <url> [<method to pick first>]`) and
 * waits for the answer on stdin: 303 when the browser is back at the shop, 0 otherwise.
 */
function payInBrowser(string $url, string $via = ''): int
{
    echo rtrim("PAY $url $via") . "\n";
    fflush(STDOUT);
    return (int) trim((string) fgets(STDIN));
}
define('IN_BROWSER', getenv('PAY_IN_BROWSER') !== false && getenv('PAY_IN_BROWSER') !== '');
define('SHOP', rtrim(getenv('SHOP_URL') ?: 'https://shop.example', '/'));

function http(string $method, string $url, ?array $json = null, bool $auth = false): array
{
    $ch = curl_init($url);
    $opts = [CURLOPT_CUSTOMREQUEST => $method, CURLOPT_RETURNTRANSFER => true, CURLOPT_HEADER => false, CURLOPT_FOLLOWLOCATION => false];
    if ($auth) $opts[CURLOPT_USERPWD] = KEY . ':';
    if ($json !== null) {
        $opts[CURLOPT_POSTFIELDS] = json_encode($json);
        $opts[CURLOPT_HTTPHEADER] = ['Content-Type: application/json'];
    }
    curl_setopt_array($ch, $opts);
    $body = curl_exec($ch);
    $info = curl_getinfo($ch);
    curl_close($ch);
    return ['status' => $info['http_code'], 'location' => $info['redirect_url'] ?? '', 'body' => $body];
}

/** The customer pays the order's card transaction: vault, authenticate (through the SDK's send), 3-D Secure. */
function payCard($client, array $order, string $pan = '4111111111111111'): array
{
    $txn = $order['transactions'][0];
    $card = http('POST', BASE . '/vault/v1/cards/', ['pan' => $pan, 'expiry' => '12' . (date('Y') + 3), 'name' => 'Ada Lovelace', 'setup_token' => $txn['payment_method_details']['setup_token']], true);
    $vault = json_decode($card['body'], true);
    $auth = $client->send('POST', sprintf('/orders/%s/transactions/%s/authenticate/', $order['id'], $txn['id']), ['vault_token' => $vault['vault_token'], 'cvc' => '123']);
    $url = $auth['redirect_url'];
    for ($hop = 0; $url && str_starts_with($url, BASE) && $hop < 10; $hop++) {
        $r = http('GET', $url);
        $url = $r['location'];
    }
    return $client->getOrder($order['id']);
}
