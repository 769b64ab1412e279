<!-- follows Etana/template@3ca46e4257dea5e96ac85ce43f1c005d1c1b04fe src/prosilver/message_body.tpl -->
<div class="panel">
	<div class="inner"><span class="corners-top"><span></span></span>
	<h1 class="page-title">{MESSAGE_TITLE}</h1>
	<p>{MESSAGE_TEXT}</p>
	<span class="corners-bottom"><span></span></span></div>
</div>
